-- Conditional append of one command's events to a game's stream.
-- KEYS: 1 log stream, 2 head hash, 3 partition feed stream, 4 idempotency record, 5 meta hash,
--       6 the partition's due set (the outbox of bot turns, move timeouts and tournament steps),
--       then Q rate-limit counters (fixed windows that start at their first count: see ARGV 14)
-- ARGV: 1 expected version, 2 expected head hash, 3 game id, 4 use idempotency ("1"/"0"),
--       5 idempotency record value, 6 idempotency ttl seconds, 7 new head hash,
--       8 number of meta pairs M, 9 number of events N,
--       10 when the game next needs a job, in ms since the epoch ("" keep, "-" none),
--       11 a meta field that must hold ARGV[12] ("" none: the seat's token hash and its seat, when the
--       caller took the seat from its own cache), 12 that value,
--       13 a sharded pub/sub channel (SPUBLISH; in the keys' slot) to announce the appended events on
--       ("" none): "<game id> <first event's number> <origin>\n<JSON array of the envelopes>", then, when the meta pairs name seats' token hashes,
--       "\n<JSON object of those pairs>" (see adapters/announcements.py),
--       14 number of rate-limit counters Q, 15 the origin: who appends (the announcement names it, so that
--       the appending process passes over its own appends),
--       then Q pairs (the counter's limit, its window in seconds), then M field/value pairs
--       for the meta hash, then N event envelopes (JSON).
-- Returns {"ok", new_version} | {"conflict", current_version, tail...} | {"duplicate", record} | {"refused"}
--       | {"limited", i, ttl}: counter i (from 1) went past its limit, its window ends in ttl seconds.
--       Counters are counted first, whatever the
--       outcome (a command that is refused still counts), and nothing is written past a limit.
-- A conflict carries the events after the expected version (at most TAIL_MAX), so that the caller can
-- catch up without another round trip. Everything is validated before the first write (Lua scripts do
-- not roll back).
local TAIL_MAX = 64
local FIXED_ARGS = 15
local expected = tonumber(ARGV[1])
local meta_pairs = tonumber(ARGV[8])
local n_events = tonumber(ARGV[9])
local due = ARGV[10]
local n_quotas = tonumber(ARGV[14])
local first_meta = FIXED_ARGS + 2 * (n_quotas or 0)
local first_event = first_meta + 2 * (meta_pairs or 0)
if expected == nil or meta_pairs == nil or n_events == nil or n_events < 1 or n_quotas == nil then
  return redis.error_reply("ERR kifu append: bad numeric argument")
end
if due == nil or (due ~= "" and due ~= "-" and tonumber(due) == nil) then
  return redis.error_reply("ERR kifu append: bad due time")
end
if #ARGV ~= first_event + n_events or #KEYS ~= 6 + n_quotas then
  return redis.error_reply("ERR kifu append: wrong number of arguments")
end
for i = 1, n_events do
  if string.len(ARGV[first_event + i]) == 0 then
    return redis.error_reply("ERR kifu append: empty event")
  end
end
for i = 1, n_quotas do
  local counted = redis.call("INCR", KEYS[6 + i])
  if counted == 1 then redis.call("EXPIRE", KEYS[6 + i], tonumber(ARGV[FIXED_ARGS + 2 * i])) end
  if counted > tonumber(ARGV[FIXED_ARGS + 2 * i - 1]) then
    return {"limited", tostring(i), tostring(redis.call("TTL", KEYS[6 + i]))}
  end
end
if ARGV[11] ~= "" and redis.call("HGET", KEYS[5], ARGV[11]) ~= ARGV[12] then
  return {"refused"}
end
if ARGV[4] == "1" then
  local prior = redis.call("GET", KEYS[4])
  if prior then return {"duplicate", prior} end
end
local current = tonumber(redis.call("HGET", KEYS[2], "version") or "0")
local head = redis.call("HGET", KEYS[2], "hash") or string.rep("0", 64)
if current ~= expected or head ~= ARGV[2] then
  local reply = {"conflict", tostring(current)}
  if current > expected and current - expected <= TAIL_MAX then
    for _, entry in ipairs(redis.call("XRANGE", KEYS[1], tostring(expected + 1) .. "-0", "+")) do
      table.insert(reply, entry[2][2])
    end
  end
  return reply
end
for i = 1, n_events do
  redis.call("XADD", KEYS[1], tostring(current + i) .. "-0", "e", ARGV[first_event + i])
end
redis.call("HSET", KEYS[2], "version", tostring(current + n_events), "hash", ARGV[7])
for i = 1, meta_pairs do
  redis.call("HSET", KEYS[5], ARGV[first_meta + 2 * i - 1], ARGV[first_meta + 2 * i])
end
if due == "-" then
  redis.call("ZREM", KEYS[6], ARGV[3])
elseif due ~= "" then
  redis.call("ZADD", KEYS[6], tonumber(due), ARGV[3])
end
redis.call("XADD", KEYS[3], "*", "g", ARGV[3], "from", tostring(current + 1), "to", tostring(current + n_events))
if ARGV[4] == "1" then
  redis.call("SET", KEYS[4], ARGV[5], "EX", tonumber(ARGV[6]) or 86400)
end
if ARGV[13] ~= "" then
  local appended, seats = {}, {}
  for i = 1, n_events do appended[i] = ARGV[first_event + i] end
  for i = 1, meta_pairs do
    local field = ARGV[first_meta + 2 * i - 1]
    if string.sub(field, 1, 4) == "tok:" then
      table.insert(seats, cjson.encode(field) .. ":" .. cjson.encode(ARGV[first_meta + 2 * i]))
    end
  end
  local message = ARGV[3] .. " " .. tostring(current + 1) .. " " .. ARGV[15] .. "\n["
    .. table.concat(appended, ",") .. "]"
  if #seats > 0 then message = message .. "\n{" .. table.concat(seats, ",") .. "}" end
  redis.call("SPUBLISH", ARGV[13], message)
end
return {"ok", tostring(current + n_events)}
