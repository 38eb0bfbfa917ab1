-- Candidate (a): the cluster's "count" layout on one node, its hot path alone. No
-- configuration read: TIME, a GET of the counter ("start:used:period:limit:origin", start and
-- used hexadecimal, as the shared limiter's script writes it when counting on a cluster), and
-- for a permit one SET that keeps the expiry. The settings are recognised by comparing the
-- counter's tail with the call's. Anything else is an error: this script measures, it does
-- not begin windows (the shared limiter's script begins the window it measures).
-- KEYS[1] the counter; ARGV as the shared limiter's "count" mode (period, limit, margin,
-- "count", "1", origin).
local time = redis.call('TIME')
local now = time[1] * 1000000 + time[2]
local counter = redis.call('GET', KEYS[1])
local period, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local tail = ':' .. ARGV[1] .. ':' .. ARGV[2] .. ':' .. ARGV[6]
local colon = counter and string.find(counter, ':', 1, true)
local second = colon and string.find(counter, ':', colon + 1, true)
if second and period and limit and string.sub(counter, second) == tail then
  local text = string.sub(counter, 1, colon - 1)
  local start = tonumber(text, 16)
  local used = tonumber(string.sub(counter, colon + 1, second - 1), 16)
  if start and used and now < start + period then
    if used + 1 > limit then
      return { 0, start + period - now, now, start }
    end
    used = used + 1
    redis.call('SET', KEYS[1], text .. ':' .. string.format('%x', used) .. tail, 'KEEPTTL')
    return { 1, used < limit and limit - used or 0, now, start }
  end
end
return redis.error_reply('candidate (a): no begun window of these settings')
