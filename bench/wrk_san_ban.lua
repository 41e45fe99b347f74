-- wrk script: each wrk thread (one connection) plays San Ban games back to back
-- through the API: create a game (standard mode, fixed 5-card decks, seat 0
-- first), then the nine `place` actions alternating seats with their tokens.
-- Run with one connection per thread: wrk -t16 -c16 -d20s --latency -s bench/wrk_san_ban.lua URL
local create_body = '{"game":"san-ban","players":[{"name":"bench-a"},{"name":"bench-b"}],'
  .. '"options":{"mode":"standard"},"deal":{"first":0,"decks":['
  .. '["sb-001","sb-002","sb-003","sb-004","sb-005"],["sb-006","sb-007","sb-008","sb-009","sb-010"]]}}'
local decks = {{"sb-001", "sb-002", "sb-003", "sb-004", "sb-005"}, {"sb-006", "sb-007", "sb-008", "sb-009"}}
local json = {["Content-Type"] = "application/json"}

local threads = {}
local game, tokens, move = nil, {}, 0
actions, creates, failures = 0, 0, 0

function setup(thread)
  table.insert(threads, thread)
end

function request()
  if game == nil then
    return wrk.format("POST", "/v1/games", json, create_body)
  end
  local seat = move % 2
  local card = decks[seat + 1][math.floor(move / 2) + 1]
  local body = string.format('{"action":{"type":"place","cell":%d,"card":"%s"}}', move, card)
  local headers = {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. tokens[seat + 1]}
  return wrk.format("POST", "/v1/games/" .. game .. "/actions", headers, body)
end

function response(status, headers, body)
  if game == nil then
    if status ~= 201 then failures = failures + 1; return end
    creates = creates + 1
    game = string.match(body, '"id":%s*"([^"]+)"')
    tokens = {}
    for token in string.gmatch(body, '"token":%s*"([^"]+)"') do table.insert(tokens, token) end
    move = 0
    return
  end
  if status == 201 then actions = actions + 1 else failures = failures + 1 end
  move = move + 1
  if move == 9 or status ~= 201 then game = nil end
end

function done(summary, latency, requests)
  local a, c, f = 0, 0, 0
  for _, thread in ipairs(threads) do
    a = a + thread:get("actions"); c = c + thread:get("creates"); f = f + thread:get("failures")
  end
  local seconds = summary.duration / 1e6
  io.write(string.format("kifu: %d actions (%.0f actions/s), %d games created, %d failures\n",
                         a, a / seconds, c, f))
  io.write(string.format("kifu: latency over all requests p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
                         latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
