-- wrk script for scenario 9 (Benchmarks/server/scenario9.py, run by Benchmarks/ab.py):
--   [WRK_CHECK=1] wrk ... -s wrk-paths.lua URL -- PATHS_FILE unique|fixed TAG
-- Requests the paths of PATHS_FILE (one a line) in turn, each thread from its own offset.
-- "unique": the "{u}" in each path becomes a token never used before (TAG, thread, counter), so
-- every request names a new source URL (the origin serves the same file whatever the token).
-- "fixed": the paths as written (the hit cases).
-- WRK_CHECK=1 checks every answer: status 200 and the Content-Type image/FORMAT of the paths'
-- format(...) filter (or any image/* when they name none), counted per thread. A response hook
-- makes wrk hand every header to Lua, so the hit cases (tens of thousands of answers a second)
-- run without it, relying on wrk's own non-2xx count and a check of each URL beforehand.
-- done() prints one JSON line: requests, seconds, latency percentiles (µs), errors, bad answers.

-- setup() and done() (the JSON line) are in wrk-report.lua, next to this file.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "wrk-report.lua")

local paths = {}
local unique = false
local tag = "0"
local counter = 0
local index = 0
local want = "image/"
bad = 0
checked = 0

function init(args)
  local file = assert(io.open(args[1], "r"))
  for line in file:lines() do
    if #line > 0 then
      local before, after = line:match("^(.-){u}(.*)$")
      table.insert(paths, { whole = line, before = before, after = after })
    end
  end
  file:close()
  assert(#paths > 0, "no paths in " .. args[1])
  unique = args[2] == "unique"
  tag = args[3] or "0"
  local format = paths[1].whole:match("format%((%a+)%)")
  if format then want = "image/" .. format end
  index = ((id or 1) * 7919) % #paths
end

function request()
  index = index % #paths + 1
  local p = paths[index]
  if unique and p.before then
    counter = counter + 1
    return wrk.format("GET", p.before .. "u" .. tag .. "t" .. id .. "n" .. counter .. p.after)
  end
  return wrk.format("GET", p.whole)
end

if os.getenv("WRK_CHECK") == "1" then
  function response(status, headers, body)
    checked = checked + 1
    local ctype = headers["Content-Type"] or headers["content-type"] or ""
    if status ~= 200 or ctype:sub(1, #want) ~= want or #body == 0 then
      bad = bad + 1
    end
  end
end
