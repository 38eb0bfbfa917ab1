-- Candidate (b): the configuration read as now, the count kept by the server's HINCRBY. The
-- counter is a hash whose field is the window's number since the origin (counted from 0), so
-- the window start needs no text of its own and the count is neither parsed nor formatted: TIME,
-- a GET of the configuration, one HINCRBY; a rejection takes its count back with a second
-- HINCRBY (the counter counts permits only, as the shared limiter's does). A window's first
-- count sets the key's expiry and drops the window before's field.
-- KEYS[1] the shared limiter's configuration ("origin:period:limit"), KEYS[2] the counter;
-- ARGV[1] period (µs), ARGV[2] limit, ARGV[3] expiry margin (ms).
-- Whether a rejection takes its count back; measured also with rejections counted (the floor
-- script's rule), the line below rewritten.
local undo = true
local time = redis.call('TIME')
local now = time[1] * 1000000 + time[2]
local stored = redis.call('GET', KEYS[1])
local settings = ':' .. ARGV[1] .. ':' .. ARGV[2]
local period, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
if stored and period and limit and string.find(stored, settings, -#settings, true) then
  local origin = tonumber(string.sub(stored, 1, -#settings - 1))
  if origin and now >= origin then
    local index = math.floor((now - origin) / period)
    local start = origin + index * period
    local used = redis.call('HINCRBY', KEYS[2], index, 1)
    if used == 1 then
      redis.call('HDEL', KEYS[2], index - 1)
      redis.call('PEXPIRE', KEYS[2], math.ceil((start + period - now) / 1000) + tonumber(ARGV[3]))
    end
    if used > limit then
      if undo then
        redis.call('HINCRBY', KEYS[2], index, -1)
      end
      return { 0, start + period - now, now, start }
    end
    return { 1, limit - used, now, start }
  end
end
return redis.error_reply('candidate (b): no configuration of these settings')
