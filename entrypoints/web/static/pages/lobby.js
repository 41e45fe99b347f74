// /: the lobby. Games with an open seat (Join), games live and finished (filter by game and status,
// newest first, paged), tournaments, and the forms to create a game or a tournament, built from
// GET /v1/catalog.
import {ApiError, api, newKey, tokens} from "../lib/api.js";
import {optionsFieldset, problemText, readOptions, showLevel} from "../lib/forms.js";
import {fill, h} from "../lib/h.js";
import {tournamentForm} from "../lib/tournament-form.js";

const root = document.getElementById("app");
const state = {catalog: [], game: "", status: "", cursors: [null]};

async function start() {
  state.catalog = (await api("/v1/catalog")).games;
  fill(root,
    h("h1", {}, "Games"),
    h("div", {class: "lobby"},
      h("div", {class: "lobby-col"},
        h("section", {"aria-labelledby": "open-title"}, h("h2", {id: "open-title"}, "Open seats"), h("div", {id: "open"})),
        h("section", {"aria-labelledby": "list-title"}, h("h2", {id: "list-title"}, "All games"), filters(), h("div", {id: "list"})),
        h("section", {"aria-labelledby": "tournaments-title"}, h("h2", {id: "tournaments-title"}, "Tournaments"),
          h("div", {id: "tournaments"}))),
      h("div", {class: "lobby-col"},
        h("section", {"aria-labelledby": "create-title"}, h("h2", {id: "create-title"}, "New game"), createForm()),
        h("section", {"aria-labelledby": "new-tournament-title"}, h("h2", {id: "new-tournament-title"}, "New tournament"),
          tournamentForm(state.catalog)))));
  await Promise.all([showOpen(), showList(), showTournaments()]);
}

function gameName(id) {
  return state.catalog.find((g) => g.id === id)?.name ?? id;
}

function seatsText(seats) {
  return seats.map((s) => s.open ? "(open)" : s.bot ? `${s.name} (bot)` : s.name).join(", ");
}

async function showOpen() {
  const open = await api("/v1/games?open=true&limit=20");
  fill(document.getElementById("open"), open.items.length
    ? h("ul", {class: "games"}, open.items.map((g) => h("li", {"data-game-id": g.id},
      h("a", {href: `/games/${g.id}`}, gameName(g.game)), ` · ${seatsText(g.seats)} `,
      g.seats.filter((s) => s.open).map((s) => h("button", {type: "button", "data-join": s.seat,
        on: {click: () => join(g.id, s.seat)}}, `Join seat ${s.seat}`)))))
    : h("p", {class: "empty"}, "No game is waiting for a player."));
}

async function join(gameId, seat) {
  const name = prompt("Your name at the table?");
  if (!name) return;
  try {
    const joined = await api(`/v1/games/${gameId}/seats/${seat}/join`, {method: "POST", body: {name}, key: newKey()});
    tokens.put(gameId, joined.seat, joined.token);
    location.href = `/games/${gameId}`;
  } catch (error) {
    alert(error instanceof ApiError ? error.message : String(error));
  }
}

function filters() {
  const select = (label, options, key) => h("label", {}, label, " ",
    h("select", {on: {change: (e) => { state[key] = e.target.value; state.cursors = [null]; showList(); }}},
      options.map(([value, text]) => h("option", {value}, text))));
  return h("div", {class: "filters"},
    select("Game", [["", "any"], ...state.catalog.map((g) => [g.id, g.name])], "game"),
    select("Status", [["", "any"], ["active", "in play"], ["finished", "finished"]], "status"));
}

async function showList() {
  const query = new URLSearchParams({limit: "20"});
  if (state.game) query.set("game", state.game);
  if (state.status) query.set("status", state.status);
  const cursor = state.cursors.at(-1);
  if (cursor) query.set("cursor", cursor);
  const page = await api(`/v1/games?${query}`);
  fill(document.getElementById("list"),
    page.items.length ? h("ul", {class: "games"}, page.items.map((g) => h("li", {"data-game-id": g.id},
      h("a", {href: `/games/${g.id}`}, gameName(g.game)), ` · ${seatsText(g.seats)} · `,
      g.status === "finished" ? "finished" : "in play"))) : h("p", {class: "empty"}, "No games yet."),
    h("div", {class: "pager"},
      state.cursors.length > 1 ? h("button", {type: "button", on: {click: () => { state.cursors.pop(); showList(); }}}, "Newer") : null,
      page.next ? h("button", {type: "button", on: {click: () => { state.cursors.push(page.next); showList(); }}}, "Older") : null));
}

const TOURNAMENT_STATUS = {created: "not started", running: "in play", paused: "paused", finished: "finished"};

// The tournaments, newest first (GET /v1/tournaments), a page at a time.
async function showTournaments(cursor = null, back = []) {
  const page = await api(`/v1/tournaments?limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
  fill(document.getElementById("tournaments"),
    page.items.length ? h("ul", {class: "games"}, page.items.map((t) => h("li", {"data-tournament-id": t.id},
      h("a", {href: `/tournaments/${t.id}`}, `${gameName(t.game)} ${t.format}`),
      ` · ${t.entrants} entrants · ${TOURNAMENT_STATUS[t.status] ?? t.status}${t.round ? `, round ${t.round} of ${t.rounds}` : ""}`)))
      : h("p", {class: "empty"}, "No tournaments yet."),
    h("div", {class: "pager"},
      back.length ? h("button", {type: "button", on: {click: () => showTournaments(back.at(-1), back.slice(0, -1))}}, "Newer") : null,
      page.next ? h("button", {type: "button", on: {click: () => showTournaments(page.next, [...back, cursor])}}, "Older") : null));
}

// The create form, from the catalogue: the game, its seats (human, open or bot with a level), its
// options from their JSON Schema fragments, and an optional move timeout.
function createForm() {
  const form = h("form", {class: "create", on: {submit: (e) => { e.preventDefault(); create(form); }}});
  const gameSelect = h("select", {name: "game", "aria-label": "Game", on: {change: () => fillGame()}},
    state.catalog.map((g) => h("option", {value: g.id}, g.name)));
  const body = h("div");
  const fillGame = () => fill(body, ...gameFields(state.catalog.find((g) => g.id === gameSelect.value)));
  fill(form, h("label", {}, "Game ", gameSelect), body, h("button", {type: "submit"}, "Create"), h("p", {class: "error", role: "alert"}));
  fillGame();
  return form;
}

function gameFields(game) {
  const seats = h("fieldset", {class: "seats-form"}, h("legend", {}, `Seats (${game.players.min}-${game.players.max})`));
  const addSeat = (kind) => seats.append(seatRow(game, seats.querySelectorAll(".seat-row").length, kind));
  for (let i = 0; i < game.players.min; i++) addSeat(i === 0 ? "human" : "bot");
  return [seats, h("button", {type: "button", on: {click: () => addSeat("human")}}, "Add a seat"), optionsFieldset(game)];
}

function seatRow(game, index, kind) {
  const levels = game.bots ?? game.bot_levels ?? [];
  return h("div", {class: "seat-row"},
    h("label", {}, `Seat ${index} `, h("select", {name: "kind", "aria-label": `Seat ${index}`, on: {change: (e) => showLevel(e.target)}},
      ["human", "open", "bot"].map((k) => h("option", {value: k, selected: k === kind}, k)))),
    h("input", {name: "name", "aria-label": `Seat ${index} name`, value: kind === "bot" ? `bot${index}` : index ? `player${index}` : "me"}),
    h("select", {name: "level", "aria-label": `Seat ${index} bot level`, hidden: kind !== "bot"}, levels.map((l) => h("option", {value: l}, l))));
}

async function create(form) {
  const error = form.querySelector(".error");
  error.textContent = "";
  const players = [...form.querySelectorAll(".seat-row")].map((row) => {
    const kind = row.querySelector("[name=kind]").value;
    const name = row.querySelector("[name=name]").value;
    if (kind === "open") return {open: true};
    if (kind === "bot") return {name, bot: row.querySelector("[name=level]").value};
    return {name};
  });
  const options = readOptions(form);
  try {
    const game = form.querySelector("[name=game]").value;
    const created = await api("/v1/games", {method: "POST", body: {game, players, options}, key: newKey()});
    created.seats.forEach((seat) => seat.token && tokens.put(created.id, seat.seat, seat.token));
    location.href = `/games/${created.id}`;
  } catch (e) {
    error.textContent = e instanceof ApiError ? problemText(e) : String(e);
  }
}

start().catch((error) => fill(root, h("p", {class: "problem", role: "alert"}, String(error.message || error))));
