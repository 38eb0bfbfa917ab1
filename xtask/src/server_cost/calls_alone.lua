-- Candidate (d): the shared limiter's hot path with its Lua taken out: its four calls (TIME, a
-- GET of the configuration and of the counter, SET of the counter's own text with KEEPTTL)
-- and a constant reply. What a permit costs with these calls whatever the logic between them.
-- KEYS as the shared limiter's "acquire" mode.
redis.call('TIME')
redis.call('GET', KEYS[1])
local counter = redis.call('GET', KEYS[2])
if not counter then
  return redis.error_reply('candidate (d): no counter')
end
redis.call('SET', KEYS[2], counter, 'KEEPTTL')
return { 1, 0, 0, 0 }
