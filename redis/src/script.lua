-- fixed-window: one attempt on a shared fixed window, run atomically by the server.
--
-- KEYS[1]  the limiter's configuration: "origin:period:limit" (microseconds, microseconds, permits),
--          written once, when absent, and never expired
-- KEYS[2]  the key's counter: "window_start:used" (microseconds, permits), expiring at the
--          window's end plus the margin
-- KEYS[3]  optional: a key holding the time in microseconds, read instead of TIME (tests)
-- ARGV[1]  period in microseconds
-- ARGV[2]  limit
-- ARGV[3]  expiry margin in milliseconds
-- ARGV[4]  "acquire", or "register" to store or check the configuration without counting
--
-- Replies (arrays of integers):
--   { 1, remaining, now, window_start }          permitted
--   { 0, retry_after, now, window_start }        the window is full; retry_after in microseconds
--   { -1, stored_period, stored_limit, origin }  the stored configuration differs
--   { 2, origin, now, 0 }                        registered
--
-- Commands used: TIME, GET, SET (with NX or PX). Nothing else.
--
-- Numbers are Lua 5.1 doubles: every value here stays below 2^53 (the client bounds the
-- period), so all arithmetic is exact.

local period = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local margin = tonumber(ARGV[3])
if not period or period < 1 or not limit or limit < 1 or not margin or margin < 0 then
  return redis.error_reply('fixed-window: bad arguments')
end

local now
if KEYS[3] then
  now = tonumber(redis.call('GET', KEYS[3]))
  if not now or now < 0 then
    return redis.error_reply('fixed-window: the time key holds no time')
  end
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end

local origin
local stored = redis.call('GET', KEYS[1])
if stored then
  local o, p, l = string.match(stored, '^(%d+):(%d+):(%d+)$')
  if not o then
    return redis.error_reply('fixed-window: malformed configuration at ' .. KEYS[1])
  end
  origin = tonumber(o)
  if tonumber(p) ~= period or tonumber(l) ~= limit then
    return { -1, tonumber(p), tonumber(l), origin }
  end
else
  origin = now
  redis.call('SET', KEYS[1], string.format('%.0f:%.0f:%.0f', origin, period, limit), 'NX')
end

if ARGV[4] == 'register' then
  return { 2, origin, now, 0 }
end

-- The window holding now: origin + k * period <= now < origin + (k + 1) * period. For
-- integers below 2^53 the floor of the rounded quotient is the exact one: a quotient that is
-- not whole lies at least 1/period below the next integer, more than half a unit in the last
-- place away. A reading before the origin belongs to the first window.
local start = origin
if now > origin then
  start = origin + math.floor((now - origin) / period) * period
end

local used = 0
local state = redis.call('GET', KEYS[2])
if state then
  local s, u = string.match(state, '^(%d+):(%d+)$')
  if not s then
    return redis.error_reply('fixed-window: malformed counter at ' .. KEYS[2])
  end
  s = tonumber(s)
  -- The stored window, if it is this one or a later one (the clock stepped back): a reading
  -- before the current window counts against it. An earlier window is over and counts nothing.
  if s >= start then
    start = s
    used = tonumber(u)
  end
end

local next_start = start + period
if used >= limit then
  return { 0, next_start - now, now, start }
end

used = used + 1
local ttl = math.ceil((next_start - now) / 1000) + margin
redis.call('SET', KEYS[2], string.format('%.0f:%.0f', start, used), 'PX', ttl)
return { 1, limit - used, now, start }
