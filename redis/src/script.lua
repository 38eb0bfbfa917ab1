-- fixed-window: a batch of attempts on a shared fixed window, run atomically by the server.
--
-- Two layouts of the keys, told apart by the mode (ARGV[4]):
--
-- "acquire" (one node: every key of the limiter may be read by one script call)
--   KEYS[1]        the limiter's configuration: "origin:period:limit" (microseconds,
--                  microseconds, permits), written once, when absent, and never expired;
--                  "origin:period:limit/version" once the limit has been changed ("limit")
--   KEYS[2..n+1]   the counter of each of the batch's n attempts (a key repeats for each
--                  attempt on it, the repeats next to each other): "window_start:used"
--                  (microseconds, permits), both in hexadecimal, expiring at the window's end
--                  plus the margin
--   KEYS[n+2]      optional: a key holding the time in microseconds, read instead of TIME
--                  (tests)
-- "count" (a cluster: each counter in a slot of its own, so no call reads the configuration)
--   KEYS[1..n]     the counters, all in one slot, each "window_start:used:period:limit:origin"
--                  (and "/version" after it once the limit has been changed): the settings
--                  that wrote it, so that a process with other settings is told of the
--                  conflict instead of counting on another grid, and one with an older
--                  version of the limit is told the newer one
--   KEYS[n+1]      optional: the time key, as above
--   ARGV[6]        the origin the process registered, or its fixed origin (decimal
--                  microseconds)
-- "lease", "lease-count"
--   as "acquire" and "count", each attempt leasing a share of its window (see ARGV[9])
-- "release", "release-count"
--   as "lease" and "lease-count", one counter: the unspent rest of a share handed back (see
--   the block below the hot path)
-- "register"
--   KEYS[1], and KEYS[2] optional: the configuration and the time key, as for "acquire"
-- "peek" and "peek-count" (a peek: read-only)
--   the layout of "acquire" and of "count": each attempt takes nothing, and nothing is
--   written whatever is found (no configuration stored, no counter rewritten), so the call
--   makes TIME and GETs only; a key never counted answers the whole limit
-- "limit"
--   KEYS[1], and KEYS[2] optional, as for "register": ARGV[2] is the new limit, stored with
--   the next version of the limit (one above the stored one or ARGV[8], whichever is
--   higher) and the stored origin (if none is stored: ARGV[6] if given, else the time now);
--   only the period is checked
-- "key-limit" (a live change of one key's limit)
--   KEYS[1] as for "limit", KEYS[2] the live limits (below), KEYS[3] optional: the time key;
--   ARGV[5] is 1; ARGV[9] the key, ARGV[10] its new limit, or empty to remove its live
--   limit; ARGV[11] optional: the live limits' text the process holds, which the change is
--   made to if the live limits key is absent (lost with the server's memory; without it a
--   change made then would store its key alone). The key's entry is written, and the configuration stored with the next version
--   of the limit as for "limit", its limit kept (ARGV[2] if none is stored), so that every
--   process of an older version is told "changed" and reads the live limits again
-- "limits" (registering, and reading the live limits with the version they go with)
--   the layout of "key-limit": as "register", and the reply has the live limits' text after
--   its four numbers
-- "restore" (writing back live limits the server lost)
--   the layout of "key-limit"; ARGV[9] is the whole live limits' text the process holds.
--   Only if the live limits key is absent (lost: once set, a change leaves it '' at least):
--   the text is written, and the configuration stored with the next version of the limit as
--   for "key-limit", so that every process that adopted the version without them is told
--   "changed" and reads them again; the reply is "limits"' with the text written. Otherwise
--   (another process wrote them back, or changed them, first) it answers as "limits"
--
-- The live limits (KEYS[2] of "key-limit" and "limits", "fixed-window:{name}/limits",
-- never expired): one entry per key with a limit set live, "limit len:key" (decimal, len the
-- key's length in bytes) one after the other, read and written whole with GET and SET (so
-- that no command beyond the script's own is needed, by a server or an ACL user).
--
-- ARGV[1]  period in microseconds
-- ARGV[2]  limit
-- ARGV[3]  expiry margin in milliseconds
-- ARGV[4]  the mode: "acquire", "count", "register" to store or check the configuration
--          without counting, "peek" or "peek-count" to ask without counting or writing,
--          "limit" to change the limit, or "lease", "lease-count" to lease shares
-- ARGV[5]  n, the number of attempts (0 to register)
-- ARGV[6]  optional on one node: a fixed origin (decimal microseconds), stored with the
--          configuration if absent, and otherwise checked against the stored one like the
--          period and limit; absent or empty, the first registration's origin (the time it
--          ran) is stored and adopted
-- ARGV[7]  optional: the permits each attempt takes, comma-separated in the order of its
--          counter key ("3,1,0"), "r" for whatever the window has left (a drain); absent, each
--          takes one. With it, ARGV[6] is present, empty where there is no origin to give
-- ARGV[8]  optional: the version of the limit the process knows (decimal); absent, 0, the
--          limit it was configured with. With it, ARGV[6] and ARGV[7] are present, empty
--          where there is nothing to give. A stored configuration (or, counting on a cluster,
--          a counter) of a newer version answers "changed" instead of deciding; one of an
--          older version is written with the caller's limit and version (a counter keeps its
--          count); one of the same version and another limit is a conflict
--          For the attempts of a key with a limit of its own, "version=limit", or
--          "version@limit" for a limit set live (see "Limits of their own" below).
-- ARGV[9]  leasing only: the largest share; ARGV[10] the divisor of the share's rule.
--          Handing back: the window start the share was leased in; ARGV[10] the permits
--
-- Limits of their own: a call whose ARGV[8] is "version=own" (the version of the limiter's
-- limit, then the limit its key has of its own) decides its attempts by `own` instead of
-- ARGV[2], which is still the limiter's limit, checked against the stored configuration as
-- for any call. A counter written so ends its count with "=own" (one node:
-- "window_start:used=own"; cluster: "window_start:used=own:period:limit:origin/version"),
-- and a counter without it was written under the limiter's limit. An attempt on a counter
-- written under another limit for its key (its own limit, or none, against the call's) of
-- the version the call knows is answered { -2, period, written_limit, origin } instead of
-- decided (nothing written); one written under an older version is rewritten with the
-- call's (its count kept), as for the limiter's limit. The hot path never decides such a
-- call: its settings' text, with "=own" after the version, matches no stored configuration.
-- A limit set live ("version@own") is every process's limit for the key at that version (a
-- process adopts a version only with the live limits read with it), so a counter written
-- under another limit is from before the change: it is rewritten with the call's, its count
-- kept, never a conflict. On one node its counter records the version too,
-- "window_start:used=own/version", so that once the live limit is removed or changed, a
-- process of a later version rewrites it in the same way (a counter "=own" without it is of
-- the version the call knows; on a cluster the counter's settings carry the version).
--
-- Replies (arrays of integers):
--   { 1, remaining, now, window_start }          per attempt, in the order of KEYS: permitted
--   { 0, retry_after, now, window_start }        per attempt: the window is full; retry_after
--                                                in microseconds
--   { -1, stored_period, stored_limit, origin }  once, whatever n: the stored configuration
--                                                (or, counting on a cluster, a counter's)
--                                                differs, the stored origin with it (0 if a
--                                                counter has none); nothing counted ("count": the
--                                                batch's keys before that counter counted,
--                                                and none of its attempts is granted)
--   { 4, share, now, window_start }              per attempt, leasing: a share counted
--   { -2, period, written_limit, origin }         per attempt: the key's counter was written
--                                                under another limit of the key's (see
--                                                "Limits of their own"); nothing written
--   { 5, permits }                               handing back: the permits taken off
--   { 2, origin, now, 0 }                        registered
--   { 3, limit, version, origin }                the limit was changed: the one in effect and
--                                                its version, and the origin. Once, whatever
--                                                n, from a stored configuration of a newer
--                                                version (nothing counted), a "limit" or a
--                                                "key-limit" call;
--                                                counting on a cluster, per attempt on a
--                                                counter of a newer version (that counter is
--                                                not written, the others count)
--
-- All attempts of a batch happen at the one time the script reads: attempts on one key count
-- one after the other, in order (a key's counter is read once and written once, whatever the
-- number of its attempts), attempts on different keys each on their own counter.
--
--   "limits" and "restore" add the live limits' text after the four numbers of { 2, ... }
--   or { 3, ... }: a string ('' once every live limit was removed), or false (a nil reply)
--   if the key is absent: never set, or lost with the server's memory
--
-- Commands used: TIME, GET, SET (with NX, PX or KEEPTTL: Redis 6.0 or newer). Nothing else;
-- a peek, TIME and GET only.
--
-- Numbers are Lua 5.1 doubles: every value here stays below 2^53 (the client bounds the
-- period), so all arithmetic is exact. The hexadecimal counter is read with tonumber(s, 16)
-- (C's strtoul) and written with string.format('%x') (C's long): exact wherever long has 64
-- bits, as on the 64-bit Linux and macOS builds of Redis and Valkey.
--
-- Cost: the server's time goes mostly to each redis.call, then to converting numbers to text
-- and back, and every string or table made is garbage the server collects every fifty
-- scripts. So an attempt of one permit in a window its key has counted in already takes the
-- hot path at the top: four calls (TIME, a GET of each key, SET with KEEPTTL: the expiry set
-- when the window began stays right; a rejection writes nothing), the stored settings
-- recognised by comparing text, no other argument validated, and the counter's window start
-- written back as the text it read. The counter is hexadecimal because Lua 5.1 reads and
-- writes that with strtoul and sprintf's integer path, where a 16-digit decimal time goes
-- through strtod's and printf's multiple-precision paths (and tonumber parses a decimal
-- twice). The origin is parsed, the window found from it and the expiry computed only when a
-- key's window begins (the full path, which reuses the hot path's time and texts). A lease
-- call of one permit on a begun window takes the hot path as well, its share computed there
-- from the count read by the full path's rule, and writes the count with the share. A batch
-- of many makes four calls and adds one GET and one SET per other key. Counting on a cluster
-- makes three calls (no configuration to read), on the full path. A changed limit costs
-- nothing more: its version is part of the settings' text, compared as before; a stored
-- version is parsed only where the text differs.

local period = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])

-- The hot path: one attempt of one permit on one node, in a window its key has counted in,
-- under the settings stored. It makes the calls the decision needs (TIME, a GET of the
-- configuration and of the counter, and for a permit one SET), recognises the settings by one
-- comparison of text, and validates nothing else: whatever it does not recognise (no
-- configuration or counter, other settings, a window over, a counter it cannot read, a batch,
-- weights, a time key) it leaves to the full path below, which reuses the time and the texts
-- read here and validates everything. It writes only when it decides, and decides as the full
-- path would.
local now, stored, counter, fetched
-- A lease call of one permit takes the hot path too, with arguments of its lease it can read
-- (any others are left to the full path, which refuses them).
local mode, lease_max, lease_divisor, leasing = ARGV[4], nil, nil, false
if mode == 'lease' then
  lease_max, lease_divisor = tonumber(ARGV[9]), tonumber(ARGV[10])
  leasing = lease_max and lease_divisor and lease_max >= 1 and lease_max % 1 == 0
    and lease_divisor >= 1 and lease_divisor % 1 == 0
end
if (mode == 'acquire' or leasing) and ARGV[5] == '1' and #KEYS == 2 and (ARGV[7] or '') == '' then
  local time = redis.call('TIME')
  now = time[1] * 1000000 + time[2]
  stored, counter, fetched = redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]), true
  local fixed, version = ARGV[6] or '', ARGV[8] or ''
  local settings = ':' .. ARGV[1] .. ':' .. ARGV[2]
  if version ~= '' and version ~= '0' then
    settings = settings .. '/' .. version
  end
  -- The configuration ends with the settings (as the full path's check below), or with a
  -- fixed origin is that origin followed by them.
  if counter and stored and period and limit
      and ((fixed == '' and string.find(stored, settings, -#settings, true))
        or (fixed ~= '' and stored == fixed .. settings)) then
    -- The window start's text is kept to be written back: one string made fewer than
    -- formatting it with the count.
    local colon = string.find(counter, ':', 1, true)
    local text = colon and string.sub(counter, 1, colon - 1)
    local start = text and tonumber(text, 16)
    local used = start and tonumber(string.sub(counter, colon + 1), 16)
    if used then
      if now < start + period then
        if used + 1 > limit then
          return { 0, start + period - now, now, start }
        end
        if leasing then
          -- The full path's share for one permit: clamp(floor(left / divisor), 1, largest).
          local share = math.max(math.min(math.floor((limit - used) / lease_divisor), lease_max), 1)
          redis.call('SET', KEYS[2], text .. ':' .. string.format('%x', used + share), 'KEEPTTL')
          return { 4, share, now, start }
        end
        used = used + 1
        redis.call('SET', KEYS[2], text .. ':' .. string.format('%x', used), 'KEEPTTL')
        return { 1, used < limit and limit - used or 0, now, start }
      end
    end
  end
end

-- "release", "release-count": a process hands back the unspent rest of a share it took out of
-- its hands, KEYS[2] on one node, KEYS[1] on a cluster, the counter it leased on; ARGV[9] the
-- window start the share was leased in (decimal microseconds), ARGV[10] the permits handed
-- back. They come off the count only if the counter is still of that window, and never more
-- than it holds: { 5, permits taken off }. Nothing else is read, checked or written.
if mode == 'release' or mode == 'release-count' then
  local key = KEYS[mode == 'release' and 2 or 1]
  local leased_in, back = tonumber(ARGV[9]), tonumber(ARGV[10])
  if not key or not leased_in or leased_in < 0 or leased_in % 1 ~= 0
      or not back or back < 0 or back % 1 ~= 0 then
    return redis.error_reply('fixed-window: bad arguments')
  end
  local held = redis.call('GET', key)
  local colon = held and string.find(held, ':', 1, true)
  if not colon or tonumber(string.sub(held, 1, colon - 1), 16) ~= leased_in then
    return { 5, 0 }
  end
  -- The count ends at the key's own limit ("=own") or the cluster's settings (":"), if any.
  local second = string.find(held, '[:=]', colon + 1)
  local used = tonumber(string.sub(held, colon + 1, (second or 0) - 1), 16)
  if not used then
    return redis.error_reply('fixed-window: malformed counter at ' .. key)
  end
  back = math.min(back, used)
  if back > 0 then
    redis.call('SET', key, string.sub(held, 1, colon) .. string.format('%x', used - back)
      .. (second and string.sub(held, second) or ''), 'KEEPTTL')
  end
  return { 5, back }
end

local margin = tonumber(ARGV[3])
local n = tonumber(ARGV[5])
-- A peek decides as an attempt of no permit and writes nothing.
local peek = ARGV[4] == 'peek' or ARGV[4] == 'peek-count'
-- Counting on a cluster, the counters come first and the origin is an argument.
local count = ARGV[4] == 'count' or ARGV[4] == 'lease-count' or ARGV[4] == 'peek-count'
local first = count and 1 or 2
local keys = #KEYS
if not period or period < 1 or not limit or limit < 1 or not margin or margin < 0
    or not n or n < 0 or n % 1 ~= 0 or keys < n + first - 1 or keys > n + first
    or (count and n < 1)
    or ((ARGV[4] == 'key-limit' or ARGV[4] == 'limits' or ARGV[4] == 'restore') and n ~= 1) then
  return redis.error_reply('fixed-window: bad arguments')
end

if KEYS[n + first] then
  now = tonumber(redis.call('GET', KEYS[n + first]))
  if not now or now < 0 then
    return redis.error_reply('fixed-window: the time key holds no time')
  end
elseif not now then
  local time = redis.call('TIME')
  now = time[1] * 1000000 + time[2]
end

-- The stored configuration holds this process's settings if its text ends with them as the
-- arguments spell them (as the client and this script write them), or, with a fixed origin,
-- is that origin followed by them; any other text is parsed, and is either the same settings
-- spelt otherwise, different ones, or malformed. A fixed origin, or on a cluster the
-- registered one, comes with the call.
local origin
if ARGV[6] and ARGV[6] ~= '' then
  origin = tonumber(ARGV[6])
  if not origin or origin < 0 or origin % 1 ~= 0 then
    return redis.error_reply('fixed-window: bad arguments')
  end
elseif count then
  return redis.error_reply('fixed-window: bad arguments')
end
-- The version of the limit this process knows, and how the configuration and counters spell
-- it after the limit: nothing for 0, "/version" otherwise.
local known, mark = 0, ''
-- Limits of their own (see the header): the key's own limit after the version, and how its
-- counter records it ('' for none).
-- A limit set live ("@") is every process's at the version: see "Limits of their own".
local version, own_limit, own_mark, live = ARGV[8], nil, '', false
local equals = version and string.find(version, '[=@]')
if equals then
  live = string.sub(version, equals, equals) == '@'
  own_limit, version = tonumber(string.sub(version, equals + 1)), string.sub(version, 1, equals - 1)
  if not own_limit or own_limit < 1 or own_limit % 1 ~= 0 or ARGV[4] == 'register'
      or ARGV[4] == 'limit' or ARGV[4] == 'key-limit' or ARGV[4] == 'limits'
      or ARGV[4] == 'restore' then
    return redis.error_reply('fixed-window: bad arguments')
  end
  own_mark = '=' .. string.format('%.0f', own_limit)
end
if version and version ~= '' then
  known = tonumber(version)
  if not known or known < 0 or known % 1 ~= 0 then
    return redis.error_reply('fixed-window: bad arguments')
  end
  if known > 0 then
    mark = '/' .. version
  end
end
if live and not count then
  -- One node: the counter records the version of the live limit it was written under.
  own_mark = own_mark .. '/' .. string.format('%.0f', known)
end
local settings = ':' .. ARGV[1] .. ':' .. ARGV[2] .. mark
-- What a counter's text ends with: the settings and origin on a cluster, nothing on one node.
local tail = ''
if count then
  tail = ':' .. ARGV[1] .. ':' .. ARGV[2] .. ':' .. ARGV[6] .. mark
elseif not fetched then
  stored = redis.call('GET', KEYS[1])
end
-- A stored configuration's parts: origin, period, limit and version (none: 0).
local config_pattern = '^(%d+):(%d+):(%d+)/?(%d*)$'
-- Reading the live limits ("limits", or "restore" finding them present): their text, false
-- if absent.
local reading, live_text = ARGV[4] == 'limits', nil
if ARGV[4] == 'restore' then
  live_text = redis.call('GET', KEYS[2])
  reading = live_text ~= false
end
-- The live limits' entries in `text` ("limit len:key" one after the other) other than
-- `key`'s, or nil if the text is malformed (an entry's limit 1 to 2^32 - 1, its key not
-- empty).
local function live_entries(text, key)
  local kept, at = {}, 1
  while at <= #text do
    local own, len, body = string.match(text, '^(%d+) (%d+):()', at)
    local stop = body and body + tonumber(len) - 1
    own = own and tonumber(own)
    if not stop or stop > #text or stop < body or own < 1 or own > 4294967295 then
      return nil
    end
    if string.sub(text, body, stop) ~= key then
      kept[#kept + 1] = string.sub(text, at, stop)
    end
    at = stop + 1
  end
  return kept
end
if count then
  -- Nothing stored to read.
elseif ARGV[4] == 'limit' or ARGV[4] == 'key-limit' or (ARGV[4] == 'restore' and not reading) then
  local o, p, l, v = origin or now, period, limit, known
  if stored then
    o, p, l, v = string.match(stored, config_pattern)
    if not o then
      return redis.error_reply('fixed-window: malformed configuration at ' .. KEYS[1])
    end
    o, p, l, v = tonumber(o), tonumber(p), tonumber(l), tonumber(v) or 0
    if p ~= period then
      return { -1, p, l, o }
    end
    v = math.max(v, known)
  end
  if ARGV[4] == 'key-limit' or ARGV[4] == 'restore' then
    -- The limiter's limit is kept: the stored one.
    limit = l
  end
  if ARGV[4] == 'restore' then
    -- The whole text, checked as the entries "key-limit" reads.
    live_text = ARGV[9]
    if not live_text or live_text == '' or not live_entries(live_text, nil) then
      return redis.error_reply('fixed-window: bad arguments')
    end
    redis.call('SET', KEYS[2], live_text)
  elseif ARGV[4] == 'key-limit' then
    -- The key's entry, removed wherever it is and added at the end with its new limit.
    local key, own = ARGV[9], ARGV[10]
    local new = tonumber(own)
    if not key or key == '' or not own
        or (own ~= '' and (not new or new < 1 or new % 1 ~= 0 or new > 4294967295)) then
      return redis.error_reply('fixed-window: bad arguments')
    end
    -- Where the server lost the live limits, the change is made to those the process holds.
    local text = redis.call('GET', KEYS[2])
    local kept = live_entries(text or ARGV[11] or '', key)
    if not kept then
      return redis.error_reply(text and 'fixed-window: malformed live limits at ' .. KEYS[2]
        or 'fixed-window: bad arguments')
    end
    if new then
      kept[#kept + 1] = string.format('%.0f %d:', new, #key) .. key
    end
    redis.call('SET', KEYS[2], table.concat(kept))
  end
  redis.call('SET', KEYS[1], string.format('%.0f:%.0f:%.0f/%.0f', o, period, limit, v + 1))
  if ARGV[4] == 'restore' then
    return { 3, limit, v + 1, o, live_text }
  end
  return { 3, limit, v + 1, o }
elseif not stored then
  origin = origin or now
  if not peek then
    redis.call('SET', KEYS[1], string.format('%.0f:%.0f:%.0f', origin, period, limit) .. mark, 'NX')
  end
elseif (origin and stored ~= ARGV[6] .. settings)
    or (not origin and string.sub(stored, -#settings) ~= settings) then
  local o, p, l, v = string.match(stored, config_pattern)
  if not o then
    return redis.error_reply('fixed-window: malformed configuration at ' .. KEYS[1])
  end
  o, p, l, v = tonumber(o), tonumber(p), tonumber(l), tonumber(v) or 0
  if p ~= period or (origin and o ~= origin) then
    return { -1, p, l, o }
  end
  if v > known and reading then
    -- Registering with the live limits: the version they belong to, and their text.
    return { 3, l, v, o, live_text or redis.call('GET', KEYS[2]) }
  end
  if v > known then
    -- The limit was changed since this process learnt it: it adopts the stored one and
    -- tries again.
    return { 3, l, v, o }
  end
  if v == known and l ~= limit then
    return { -1, p, l, o }
  end
  origin = o
  if v < known then
    -- Stored anew (the key was lost) by a process that had not learnt the change: the newer
    -- version is the one in effect (a peek writes nothing).
    if not peek then
      redis.call('SET', KEYS[1], string.format('%.0f:%.0f:%.0f', origin, period, limit) .. mark)
    end
  end
end

-- The origin, parsed from a stored configuration recognised by its text only when a window
-- must be computed; nil if that text is malformed.
local function parsed_origin()
  origin = origin or tonumber(string.match(stored, '^(%d+):%d+:%d+'))
  return origin
end

if ARGV[4] == 'register' or reading then
  if not parsed_origin() then
    return redis.error_reply('fixed-window: malformed configuration at ' .. KEYS[1])
  end
  if reading then
    return { 2, origin, now, 0, live_text or redis.call('GET', KEYS[2]) }
  end
  return { 2, origin, now, 0 }
end

-- The attempts on one key are next to each other in KEYS (the client groups them, keeping
-- their order): the key's counter is read once before them and written once after them.
-- The reply is made with room for one attempt's four numbers, so a batch of one never grows
-- it.
-- The permits each attempt takes: one, unless the call says otherwise (weighted attempts).
local weights
if ARGV[7] and ARGV[7] ~= '' then
  weights = {}
  for weight in string.gmatch(ARGV[7], '[^,]+') do
    weights[#weights + 1] = tonumber(weight) or weight
  end
  if #weights ~= n then
    return redis.error_reply('fixed-window: bad arguments')
  end
end

-- Leasing: "lease" has the layout of "acquire", "lease-count" that of "count"; ARGV[9] is the
-- largest share and ARGV[10] the divisor (ARGV[6..8] present, empty where there is nothing
-- to give). An attempt that fits takes a share of what its window has left,
-- clamp(floor(left / divisor), its permits, largest share), counted as permits are, and is
-- answered { 4, share, now, window_start }; one that does not fit is refused as any attempt
-- is. Everything else (settings, versions, conflicts, origins, expiry) is as for counting.
if ARGV[4] == 'lease' or ARGV[4] == 'lease-count' then
  lease_max, lease_divisor = tonumber(ARGV[9]), tonumber(ARGV[10])
  if not lease_max or lease_max < 1 or lease_max % 1 ~= 0
      or not lease_divisor or lease_divisor < 1 or lease_divisor % 1 ~= 0 then
    return redis.error_reply('fixed-window: bad arguments')
  end
end

-- The limit the attempts are decided by: the key's own, else the limiter's.
local key_limit = own_limit or limit
local reply, i = { 0, 0, 0, 0 }, first
while i <= n + first - 1 do
  local key = KEYS[i]
  -- The counter counts in if it is of the window holding now or of a later one (the clock
  -- stepped back: a reading before the current window counts against it). Counters are
  -- written only on the origin's grid, so a start after now - period is this window's or a
  -- later one's; an earlier window is over and counts nothing.
  local start, used, prefix, stale, newer, written = nil, 0, false, false, nil, nil
  -- The counter's limiter limit and version (one node: this call's; a cluster's counter
  -- says).
  local counter_limit, counter_version = limit, known
  local state = counter
  if not fetched then
    state = redis.call('GET', key)
  end
  if state then
    local colon = string.find(state, ':', 1, true)
    local second = colon and string.find(state, ':', colon + 1, true)
    -- Limits of their own: the limit the counter was written under, if its key had one.
    -- On one node, a live limit's version after it ("=own/version").
    local used_end, at = (second or 0) - 1, colon and string.find(state, '=', colon + 1, true)
    local written_version
    if at and (not second or at < second) then
      local own, own_version = string.match(string.sub(state, at + 1, used_end), '^(%d+)/?(%d*)$')
      written, written_version = tonumber(own), tonumber(own_version)
      used_end = at - 1
      if not written or (count and written_version) then
        return redis.error_reply('fixed-window: malformed counter at ' .. key)
      end
    end
    start = colon and tonumber(string.sub(state, 1, colon - 1), 16)
    used = colon and tonumber(string.sub(state, colon + 1, used_end), 16)
    if not start or not used then
      return redis.error_reply('fixed-window: malformed counter at ' .. key)
    end
    -- A counter that another process wrote with other settings: a conflict, as a stored
    -- configuration that differs.
    if (second and string.sub(state, second) or '') ~= tail then
      -- The count may end with the key's own limit ("=own") before the settings.
      local p, l, o, v = string.match(state, '^%x+:%x+=?%d*:(%d+):(%d+):(%d+)/?(%d*)$')
      if not p then
        return redis.error_reply('fixed-window: malformed counter at ' .. key)
      end
      p, l, o, v = tonumber(p), tonumber(l), tonumber(o), tonumber(v) or 0
      if p ~= period or o ~= origin or (v == known and l ~= limit) then
        return { -1, p, l, o }
      end
      counter_limit, counter_version = l, v
      if v > known then
        -- Written under a newer limit: this key's attempts are told it, and nothing is
        -- written.
        newer = { 3, l, v, o }
      else
        -- Written under an older limit: rewritten with this call's, its count kept.
        stale = true
      end
    end
    -- Limits of their own: a counter of the current window written under another limit for
    -- its key (its own or the limiter's) at the version this call knows is a conflict on
    -- this key alone; at another version, or against a limit set live, it is rewritten
    -- with this call's, its count kept. A counter of a window that is over counts nothing,
    -- and settles nothing.
    local was = written or counter_limit
    if written_version then
      counter_version = written_version
    end
    if not newer and was ~= key_limit and now < start + period then
      if counter_version == known and not live then
        newer = { -2, period, was, origin or parsed_origin() or 0 }
      else
        stale = true
      end
    end
    if newer then
      -- Skipped below.
    elseif now < start + period then
      prefix = string.sub(state, 1, colon)
    else
      start, used = nil, 0
    end
  end
  if newer then
    -- Nothing to count here.
  elseif not start then
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
    local at = 4 * (i - first)
    if newer then
      reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = newer[1], newer[2], newer[3], newer[4]
    else
      local weight = weights and weights[i - first + 1] or 1
      if peek then
        weight = 0
      end
      if weight == 'r' then
        -- A limit lowered below the count leaves nothing to take.
        weight = math.max(key_limit - used, 0)
      end
      if type(weight) ~= 'number' or weight < 0 then
        return redis.error_reply('fixed-window: bad arguments')
      end
      if weight > 0 and used + weight > key_limit then
        reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 0, start + period - now, now, start
      else
        if lease_max and weight > 0 then
          weight = math.max(math.min(math.floor((key_limit - used) / lease_divisor), lease_max), weight)
        end
        used = used + weight
        -- Nothing left, not less, where a lowered limit left the count above it (a zero weight).
        reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 1, used < key_limit and key_limit - used or 0, now, start
        if lease_max and weight > 0 then
          reply[at + 1], reply[at + 2] = 4, weight
        end
      end
    end
    i = i + 1
  until i > n + first - 1 or KEYS[i] ~= key
  -- Written once, if its attempts counted a permit: a window that went on keeps the expiry
  -- set when it began; one that begins here expires at its end plus the margin. Attempts
  -- that took nothing (zero permits, or refused) write nothing, as in core: a counter of an
  -- earlier window stays what it was. A counter written under an older limit is written
  -- with this call's settings even so, so that processes still on the older limit are told.
  if newer or peek or (used == read and not stale) then
    -- Nothing to write.
  elseif not prefix then
    local ttl = math.ceil((start + period - now) / 1000) + margin
    redis.call('SET', key, string.format('%x:%x', start, used) .. own_mark .. tail, 'PX', ttl)
  else
    redis.call('SET', key, string.format('%s%x', prefix, used) .. own_mark .. tail, 'KEEPTTL')
  end
end
return reply
