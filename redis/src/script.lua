-- fixed-window: a batch of attempts on a shared fixed window, run atomically by the server.
--
-- KEYS[1]        the limiter's configuration: "origin:period:limit" (microseconds,
--                microseconds, permits), written once, when absent, and never expired
-- KEYS[2..n+1]   the counter of each of the batch's n attempts (a key repeats for each
--                attempt on it, the repeats next to each other): "window_start:used"
--                (microseconds, permits), both in hexadecimal, expiring at the window's end
--                plus the margin
-- KEYS[n+2]      optional: a key holding the time in microseconds, read instead of TIME (tests)
-- ARGV[1]  period in microseconds
-- ARGV[2]  limit
-- ARGV[3]  expiry margin in milliseconds
-- ARGV[4]  "acquire", or "register" to store or check the configuration without counting
-- ARGV[5]  n, the number of attempts (0 to register)
--
-- Replies (arrays of integers):
--   { 1, remaining, now, window_start }          per attempt, in the order of KEYS: permitted
--   { 0, retry_after, now, window_start }        per attempt: the window is full; retry_after
--                                                in microseconds
--   { -1, stored_period, stored_limit, origin }  once, whatever n: the stored configuration
--                                                differs, nothing counted
--   { 2, origin, now, 0 }                        registered
--
-- All attempts of a batch happen at the one time the script reads: attempts on one key count
-- one after the other, in order (a key's counter is read once and written once, whatever the
-- number of its attempts), attempts on different keys each on their own counter.
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
-- window found from it and the expiry computed only when a key's window begins. A batch of
-- one makes the same calls; a batch of many adds one GET and one SET per other key.

local period = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local margin = tonumber(ARGV[3])
local n = tonumber(ARGV[5])
local keys = #KEYS
if not period or period < 1 or not limit or limit < 1 or not margin or margin < 0
    or not n or n < 0 or n % 1 ~= 0 or keys < n + 1 or keys > n + 2 then
  return redis.error_reply('fixed-window: bad arguments')
end

local now
if KEYS[n + 2] then
  now = tonumber(redis.call('GET', KEYS[n + 2]))
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

-- The origin, parsed from a stored configuration recognised by its text only when a window
-- must be computed; nil if that text is malformed.
local function parsed_origin()
  origin = origin or tonumber(string.match(stored, '^(%d+):%d+:%d+$'))
  return origin
end

if ARGV[4] == 'register' then
  if not parsed_origin() then
    return redis.error_reply('fixed-window: malformed configuration at ' .. KEYS[1])
  end
  return { 2, origin, now, 0 }
end

-- The attempts on one key are next to each other in KEYS (the client groups them, keeping
-- their order): the key's counter is read once before them and written once after them.
-- The reply is made with room for one attempt's four numbers, so a batch of one never grows
-- it.
local reply, i = { 0, 0, 0, 0 }, 2
while i <= n + 1 do
  local key = KEYS[i]
  -- The counter counts in if it is of the window holding now or of a later one (the clock
  -- stepped back: a reading before the current window counts against it). Counters are
  -- written only on the origin's grid, so a start after now - period is this window's or a
  -- later one's; an earlier window is over and counts nothing.
  local start, used, prefix = nil, 0, false
  local state = redis.call('GET', key)
  if state then
    local colon = string.find(state, ':', 1, true)
    start = colon and tonumber(string.sub(state, 1, colon - 1), 16)
    used = colon and tonumber(string.sub(state, colon + 1), 16)
    if not start or not used then
      return redis.error_reply('fixed-window: malformed counter at ' .. key)
    end
    if now < start + period then
      prefix = string.sub(state, 1, colon)
    else
      start, used = nil, 0
    end
  end
  if not start then
    if not parsed_origin() then
      return redis.error_reply('fixed-window: malformed configuration at ' .. KEYS[1])
    end
    -- The key's window begins: the one holding now, origin + k * period <= now < origin +
    -- (k + 1) * period. For integers below 2^53 the floor of the rounded quotient is the
    -- exact one: a quotient that is not whole lies at least 1/period below the next
    -- integer, more than half a unit in the last place away. A reading before the origin
    -- belongs to the first window.
    start = origin
    if now > origin then
      start = origin + math.floor((now - origin) / period) * period
    end
  end
  local read = used
  repeat
    local at = 4 * (i - 2)
    if used >= limit then
      reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 0, start + period - now, now, start
    else
      used = used + 1
      reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 1, limit - used, now, start
    end
    i = i + 1
  until i > n + 1 or KEYS[i] ~= key
  -- Written once, if its attempts counted a permit: a window that went on keeps the expiry
  -- set when it began; one that begins here expires at its end plus the margin.
  if not prefix then
    local ttl = math.ceil((start + period - now) / 1000) + margin
    redis.call('SET', key, string.format('%x:%x', start, used), 'PX', ttl)
  elseif used > read then
    redis.call('SET', key, string.format('%s%x', prefix, used), 'KEEPTTL')
  end
end
return reply
