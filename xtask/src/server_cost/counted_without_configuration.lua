-- Candidate (c): (a) and (b) together. No configuration read and the count kept by the
-- server's HINCRBY: TIME and one HINCRBY, the origin an argument (as when counting on a
-- cluster); a rejection takes its count back with a second HINCRBY. The counter is a hash
-- whose field is the window's number since the origin; a window's first count sets the key's
-- expiry and drops the window before's field. Nothing recognises the settings: a process
-- with another limit would count on the same field by its own limit.
-- KEYS[1] the counter; ARGV as the shared limiter's "count" mode (period, limit, margin,
-- "count", "1", origin).
-- Whether a rejection takes its count back; measured also with rejections counted (the floor
-- script's rule), the line below rewritten.
local undo = true
local time = redis.call('TIME')
local now = time[1] * 1000000 + time[2]
local period, limit, origin = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[6])
if period and limit and origin and now >= origin then
  local index = math.floor((now - origin) / period)
  local start = origin + index * period
  local used = redis.call('HINCRBY', KEYS[1], index, 1)
  if used == 1 then
    redis.call('HDEL', KEYS[1], index - 1)
    redis.call('PEXPIRE', KEYS[1], math.ceil((start + period - now) / 1000) + tonumber(ARGV[3]))
  end
  if used > limit then
    if undo then
      redis.call('HINCRBY', KEYS[1], index, -1)
    end
    return { 0, start + period - now, now, start }
  end
  return { 1, limit - used, now, start }
end
return redis.error_reply('candidate (c): bad arguments')
