-- Sets the request from the environment and prints one machine-readable line at the end,
-- so the harness never has to parse wrk's human-readable summary.
local method = os.getenv("BENCH_METHOD") or "GET"
local bodyFile = os.getenv("BENCH_BODY_FILE")

wrk.method = method
if bodyFile and bodyFile ~= "" then
  local f = assert(io.open(bodyFile, "rb"))
  wrk.body = f:read("*a")
  f:close()
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"meanUs":%.1f,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout))
end
