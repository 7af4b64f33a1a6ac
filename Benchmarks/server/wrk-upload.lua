-- wrk script for the upload benchmark (Benchmarks/server/store.py, run by Benchmarks/ab.py):
--   wrk ... -s wrk-upload.lua URL -- FILES_LIST
-- POSTs the files of FILES_LIST (one path a line) in turn to /image, each as the raw body with
-- `Slug: <its name>` (thumbor's upload API, also `osprey serve --upload`), each thread from its
-- own offset. Every answer is checked: status 201 and a `Location` header, counted per thread.
-- done() prints one JSON line as wrk-paths.lua does (requests, seconds, latency percentiles in µs,
-- errors, bad answers).

-- setup() and done() (the JSON line) are in wrk-report.lua, next to this file.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "wrk-report.lua")

local requests = {}
local index = 0
bad = 0
checked = 0

function init(args)
  local list = assert(io.open(args[1], "r"))
  for path in list:lines() do
    if #path > 0 then
      local file = assert(io.open(path, "rb"))
      local body = file:read("*a")
      file:close()
      local name = path:match("([^/]+)$")
      local headers = { ["Slug"] = name, ["Content-Type"] = "application/octet-stream" }
      table.insert(requests, wrk.format("POST", "/image", headers, body))
    end
  end
  list:close()
  assert(#requests > 0, "no files in " .. args[1])
  index = ((id or 1) * 7919) % #requests
end

function request()
  index = index % #requests + 1
  return requests[index]
end

function response(status, headers, body)
  checked = checked + 1
  if status ~= 201 or not (headers["Location"] or headers["location"]) then
    bad = bad + 1
  end
end
