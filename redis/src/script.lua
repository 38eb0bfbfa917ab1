-- fixed-window: one attempt on a shared fixed window, run atomically by the server.
--
-- KEYS[1]  the limiter's configuration: "origin:period:limit" (microseconds, microseconds, permits),
--          written once, when absent, and never expired
-- KEYS[2]  the key's counter: "window_start:used" (microseconds, permits), both in
--          hexadecimal, expiring at the window's end plus the margin
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
-- Commands used: TIME, GET, SET (with NX, PX or KEEPTTL: Redis 6.0 or newer). Nothing else.
--
-- Numbers are Lua 5.1 doubles: every value here stays below 2^53 (the client bounds the
-- period), so all arithmetic is exact. The hexadecimal counter is read with tonumber(s, 16)
-- (C's strtoul) and written with string.format('%x') (C's long): exact wherever long has 64
-- bits, as on the 64-bit Linux and macOS builds of Redis and Valkey.
--
-- Cost: the server's time goes to each redis.call and to converting numbers to text and back,
-- and every string or table made is garbage the server collects every fifty scripts. So an
-- attempt in a window its key has counted in already makes four calls (TIME, a GET of each
-- key, SET with KEEPTTL: the expiry set when the window began stays right), recognises the
-- stored settings by comparing text, and writes the counter's window start back as the text
-- it read. The counter is hexadecimal because Lua 5.1 reads and writes that with strtoul and
-- sprintf's integer path, where a 16-digit decimal time goes through strtod's and printf's
-- multiple-precision paths (and tonumber parses a decimal twice). The origin is parsed, the
-- window found from it and the expiry computed only when a key's window begins.

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
  now = time[1] * 1000000 + time[2]
end

-- The stored configuration holds this process's settings if its text ends with them as the
-- arguments spell them (as the client and this script write them); any other text is parsed,
-- and is either the same settings spelt otherwise, different ones, or malformed.
local origin
local settings = ':' .. ARGV[1] .. ':' .. ARGV[2]
local stored = redis.call('GET', KEYS[1])
if not stored then
  origin = now
  redis.call('SET', KEYS[1], string.format('%.0f:%.0f:%.0f', origin, period, limit), 'NX')
elseif string.sub(stored, -#settings) ~= settings then
  local o, p, l = string.match(stored, '^(%d+):(%d+):(%d+)$')
  if not o then
    return redis.error_reply('fixed-window: malformed configuration at ' .. KEYS[1])
  end
  if tonumber(p) ~= period or tonumber(l) ~= limit then
    return { -1, tonumber(p), tonumber(l), tonumber(o) }
  end
  origin = tonumber(o)
end

if ARGV[4] ~= 'register' then
  -- The counter counts in if it is of the window holding now or of a later one (the clock
  -- stepped back: a reading before the current window counts against it). Counters are
  -- written only on the origin's grid, so a start after now - period is this window's or a
  -- later one's; an earlier window is over and counts nothing.
  local state = redis.call('GET', KEYS[2])
  if state then
    local colon = string.find(state, ':', 1, true)
    local start = colon and tonumber(string.sub(state, 1, colon - 1), 16)
    local used = colon and tonumber(string.sub(state, colon + 1), 16)
    if not start or not used then
      return redis.error_reply('fixed-window: malformed counter at ' .. KEYS[2])
    end
    if now < start + period then
      if used >= limit then
        return { 0, start + period - now, now, start }
      end
      used = used + 1
      redis.call('SET', KEYS[2], string.format('%s%x', string.sub(state, 1, colon), used), 'KEEPTTL')
      return { 1, limit - used, now, start }
    end
  end
end

if not origin then
  origin = tonumber(string.match(stored, '^(%d+):%d+:%d+$'))
  if not origin then
    return redis.error_reply('fixed-window: malformed configuration at ' .. KEYS[1])
  end
end

if ARGV[4] == 'register' then
  return { 2, origin, now, 0 }
end

-- The key's window begins: the one holding now, origin + k * period <= now < origin + (k + 1)
-- * period. For integers below 2^53 the floor of the rounded quotient is the exact one: a
-- quotient that is not whole lies at least 1/period below the next integer, more than half a
-- unit in the last place away. A reading before the origin belongs to the first window.
local start = origin
if now > origin then
  start = origin + math.floor((now - origin) / period) * period
end

local ttl = math.ceil((start + period - now) / 1000) + margin
redis.call('SET', KEYS[2], string.format('%x:1', start), 'PX', ttl)
return { 1, limit - 1, now, start }
