-- Count one command against rate-limit windows: append.lua's counting, for a command that appended
-- nothing (refused before its append, or answered from its idempotency record).
-- KEYS: the counters. ARGV: for each, its limit and its window in seconds (a window starts at its
-- counter's first count). Returns {0}, or {i, ttl}: counter i (from 1) went past its limit, and its
-- window ends in ttl seconds (the counters after it are not counted).
for i = 1, #KEYS do
  local counted = redis.call("INCR", KEYS[i])
  if counted == 1 then redis.call("EXPIRE", KEYS[i], tonumber(ARGV[2 * i])) end
  if counted > tonumber(ARGV[2 * i - 1]) then return {i, redis.call("TTL", KEYS[i])} end
end
return {0}
