-- The part of wrk-paths.lua and wrk-upload.lua they share, loaded by both with dofile:
-- setup() numbers the threads and keeps them, done() prints one JSON line (requests, seconds,
-- latency percentiles in µs, errors, and the per-thread `bad`/`checked` counts the scripts keep).

local threads = {}
local thread_count = 0

function setup(thread)
  thread_count = thread_count + 1
  thread:set("id", thread_count)
  table.insert(threads, thread)
end

function done(summary, latency, requests)
  local bad_total, checked_total = 0, 0
  for _, thread in ipairs(threads) do
    bad_total = bad_total + (thread:get("bad") or 0)
    checked_total = checked_total + (thread:get("checked") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"seconds":%.6f,"bytes":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f,' ..
    '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"status_errors":%d,"timeouts":%d,"bad":%d,"checked":%d}\n',
    summary.requests, summary.duration / 1e6, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout, bad_total, checked_total))
end
