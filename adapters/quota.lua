-- Count one command against rate-limit windows: append.lua's counting, for a command that appended
-- nothing (refused before its append, or answered from its idempotency record).
-- KEYS: the counters. ARGV: for each, its limit and the Unix second its window ends.
-- Returns 0, or i (from 1): counter i went past its limit (the counters after it are not counted).
for i = 1, #KEYS do
  local counted = redis.call("INCR", KEYS[i])
  if counted == 1 then redis.call("EXPIREAT", KEYS[i], tonumber(ARGV[2 * i])) end
  if counted > tonumber(ARGV[2 * i - 1]) then return i end
end
return 0
