// /games/{id}: a game's table, live or at a step (?step=N&as=S), with its log.
//
// Live (no ?step): the latest view, followed through the game stream (a ticket when this tab holds a
// seat's token), never polled. Stepping: buttons, a slider and the keyboard (arrows, Home, End); the URL
// follows the step, so any position can be shared. The table carries data-step and data-as; every card
// data-card (tests and outside checks rely on these).
import {ApiError, api, newKey, tokens} from "../lib/api.js";
import {fill, h} from "../lib/h.js";

const GAMES = ["san-ban", "nin-nal", "kiri-ai", "san-ni-ichi", "front-line"];
const root = document.getElementById("app");
const gameId = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1] || "");

const page = {
  meta: null, // the live view (GET /v1/games/{id}) when the page opened or last heard of a move
  drawer: null, // the game's module: drawTable(view, ctx), sentence(event, ctx)
  as: null, // the seat whose view is shown, or null for the spectator's
  token: null, // that seat's token, if this tab holds it
  step: null, // the step shown (null: live)
  last: 0, // the last step of the log
  events: [], // the log as the viewer may read it
  steps: new Map(), // step -> {step, event, view}: every step's view, loaded once (loadSteps)
  stream: null,
  frame: null, // the page's parts, built once (buildFrame)
};

async function start() {
  const params = new URLSearchParams(location.search);
  const held = tokens.all(gameId);
  page.as = params.has("as") && params.get("as") !== "spectator" ? Number(params.get("as")) : heldSeat(held);
  page.token = page.as === null ? null : held[page.as] ?? null;
  page.meta = await api(`/v1/games/${gameId}`, {token: page.token});
  page.last = page.meta.version;
  page.drawer = await import(`../games/${GAMES.includes(page.meta.game) ? page.meta.game : "generic"}.js`);
  page.step = params.has("step") ? clampStep(Number(params.get("step"))) : null;
  await loadLog();
  await show();
  document.addEventListener("keydown", onKey);
  if (page.meta.status === "active") follow();
}

function heldSeat(held) {
  const seats = Object.keys(held);
  return seats.length ? Number(seats[0]) : null;
}

function clampStep(n) {
  return Math.min(Math.max(Number.isFinite(n) ? Math.trunc(n) : page.last, 1), page.last);
}

async function loadLog() {
  page.events = [];
  let after = 0;
  for (;;) {
    const part = await api(`/v1/games/${gameId}/events?after=${after}&limit=1000`, {token: page.token});
    page.events.push(...part.items);
    if (part.next === null) return;
    after = part.next;
  }
}

// The view at the step shown: the live one, or the replay's.
async function viewNow() {
  if (page.step === null) {
    const view = await api(`/v1/games/${gameId}`, {token: page.token});
    page.last = Math.max(page.last, view.version);
    return {view, step: view.version, event: page.events.find((e) => e.seq === view.version) ?? null};
  }
  if (!page.steps.has(page.step)) await loadSteps(page.step);
  const answer = page.steps.get(page.step);
  return {view: answer.view, step: answer.step, event: answer.event};
}

// Every step's view, a page at a time (GET /v1/games/{id}/steps): stepping is then drawing only.
async function loadSteps(from) {
  const as = page.as === null ? "" : `&as=${page.as}`;
  let next = from;
  while (next !== null) {
    const part = await api(`/v1/games/${gameId}/steps?from=${next}&limit=1000${as}`, {token: page.token});
    for (const item of part.items) page.steps.set(item.step, item);
    page.last = Math.max(page.last, part.last);
    next = part.next;
  }
}

// Draw the step shown. The page's frame (the log, the record panel) is built once; a step redraws only the
// table, the header and the controls, and moves the log's highlight: stepping stays under a frame.
async function show() {
  const {view, step, event} = await viewNow();
  const ctx = {as: page.as, names: view.seats.map((s) => s.name ?? `seat ${s.seat}`), view, event};
  if (!page.frame) page.frame = buildFrame();
  const {head, table, log, steps, play} = page.frame;
  fill(head, header(view, step));
  table.dataset.step = step;
  table.dataset.as = page.as === null ? "spectator" : page.as;
  table.dataset.game = view.game;
  table.setAttribute("aria-label", `The table at step ${step}`);
  fill(table, seatsPanel(view, ctx), page.drawer.drawTable(view, ctx));
  if (log.dataset.count !== String(page.events.length)) fillLog(log, ctx);
  log.querySelector("li.current")?.classList.remove("current");
  const current = log.querySelector(`li[data-seq='${step}']`);
  current?.classList.add("current");
  current?.scrollIntoView({block: "nearest"});
  fill(steps, controls(step));
  fill(play, playPanel(view, ctx));
}

function buildFrame() {
  const frame = {head: h("div", {class: "game-head"}), table: h("section", {class: "table"}),
    log: h("ol"), steps: h("div"), play: h("div")};
  fill(root, frame.head,
    h("div", {class: "game-layout"}, frame.table, h("aside", {class: "log", "aria-label": "Event log"}, h("h2", {}, "Log"), frame.log)),
    frame.steps, frame.play, auditPanel());
  return frame;
}

function fillLog(log, ctx) {
  fill(log, page.events.map((event) => h("li", {"data-seq": event.seq},
    h("a", {href: stepUrl(event.seq), on: {click: (e) => { e.preventDefault(); goTo(event.seq); }}},
      h("span", {class: "seq"}, event.seq), " ", describe(event, ctx)))));
  log.dataset.count = String(page.events.length);
}

// The record: download it, or have the server verify it (POST /v1/audits, what anyone can do with the
// file) and see the verdict, with the first bad event marked in the log.
function auditPanel() {
  const verdict = h("p", {class: "verdict", role: "status"});
  const download = async () => {
    const record = await api(`/v1/games/${gameId}/record`, {token: page.token});
    const link = h("a", {href: URL.createObjectURL(new Blob([JSON.stringify(record, null, 1)], {type: "application/json"})),
      download: `${gameId}.record.json`});
    document.body.append(link);
    link.click();
    link.remove();
  };
  const verify = async () => {
    verdict.textContent = "Verifying…";
    const record = await api(`/v1/games/${gameId}/record`, {token: page.token});
    const report = await api("/v1/audits", {method: "POST", body: record});
    showVerdict(verdict, report);
  };
  const failed = (error) => { verdict.textContent = error instanceof ApiError ? error.message : String(error); };
  return h("section", {class: "audit", "aria-label": "Audit"}, h("h2", {}, "Record"),
    h("button", {type: "button", on: {click: () => download().catch(failed)}}, "Download the record"), " ",
    h("button", {type: "button", "data-verify": "", on: {click: () => verify().catch(failed)}}, "Verify it"), verdict);
}

function showVerdict(el, report) {
  el.dataset.verdict = report.verdict;
  const words = {verified: "✔ Verified: every event chained, every hidden part proven, the result re-derived.",
    in_progress: "… In progress: the chain and commitments are valid; the result is not proven yet.",
    failed: "✘ Not verified"};
  const failedAt = report.first_bad_event;
  el.textContent = words[report.verdict] + (report.verdict === "failed"
    ? `: ${(report.checks || []).filter((c) => !c.ok).map((c) => c.name).join(", ")}${failedAt ? ` (first bad event: ${failedAt})` : ""}` : "");
  for (const item of document.querySelectorAll(".log li.bad")) item.classList.remove("bad");
  if (failedAt) document.querySelector(`.log li[data-seq='${failedAt}']`)?.classList.add("bad");
}

// Playing, with this tab's seat token: the seat's legal actions (GET /actions) as buttons, sent with an
// Idempotency-Key and the expected version, so a double click or a retry never acts twice.
function playPanel(view, ctx) {
  const panel = h("section", {class: "play", "aria-label": "Play"});
  if (page.step !== null || view.status !== "active") return panel;
  if (page.token === null) {
    const input = h("input", {name: "token", "aria-label": "A seat token", placeholder: "paste a seat token to play"});
    const form = h("form", {on: {submit: (e) => { e.preventDefault(); useToken(input.value.trim()); }}},
      input, h("button", {type: "submit"}, "Play this seat"));
    return fill(panel, form);
  }
  if (!view.to_act.includes(page.as)) {
    return fill(panel, h("p", {}, view.committed.includes(page.as) ? "Your choice is committed." : "Waiting for the others."));
  }
  fill(panel, h("p", {}, "Your move…"));
  api(`/v1/games/${gameId}/actions`, {token: page.token}).then((legal) => {
    const label = (action) => page.drawer.actionLabel?.(action, ctx) || actionText(action);
    fill(panel, h("h2", {}, "Your move"), h("div", {class: "actions"}, legal.actions.map((action) =>
      h("button", {type: "button", class: "action", "data-action": JSON.stringify(action),
        on: {click: (e) => act(action, legal.version, e.currentTarget, panel)}}, label(action)))),
      h("p", {class: "error", role: "alert"}));
  }).catch(report);
  return panel;
}

function actionText(action) {
  return Object.entries(action).map(([k, v]) => (k === "type" ? v : `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`)).join(", ");
}

async function act(action, version, button, panel) {
  const key = button.dataset.key || (button.dataset.key = newKey()); // a retry of this click reuses its key
  for (const other of panel.querySelectorAll("button")) other.disabled = true;
  try {
    await api(`/v1/games/${gameId}/actions`, {method: "POST", token: page.token, key,
      body: {action, expected_version: version}});
  } catch (error) {
    for (const other of panel.querySelectorAll("button")) other.disabled = false;
    panel.querySelector(".error").textContent = error instanceof ApiError ? error.message : String(error);
    return;
  }
  if (!page.stream) await show().catch(report); // else the stream brings the new events and redraws
}

async function useToken(token) {
  try {
    const view = await api(`/v1/games/${gameId}`, {token});
    if (view.you === null || view.you === undefined) throw new Error("this token is no seat of this game");
    tokens.put(gameId, view.you, token);
    location.reload();
  } catch (error) {
    alert(error instanceof ApiError ? error.message : String(error));
  }
}

function header(view, step) {
  const who = page.as === null ? "as a spectator" : `as ${view.seats[page.as]?.name ?? `seat ${page.as}`}`;
  const live = page.step === null ? h("span", {class: "badge live"}, "live") : h("span", {class: "badge"}, "replay");
  const status = page.meta.status === "finished" || view.status === "finished" ? "finished" : "in play";
  return [h("h1", {}, title(view.game), " ", h("small", {}, gameId)),
    h("p", {}, live, ` step ${step} of ${page.last}, ${who} · ${status}`)];
}

function title(game) {
  return {"san-ban": "San Ban", "nin-nal": "Nin Nal", "kiri-ai": "Kiri-ai", "san-ni-ichi": "San, Ni, Ichi!",
    "front-line": "Front Line"}[game] || game;
}

// Who sits where, whose turn it is, who has chosen, and each seat's deadline as a countdown.
function seatsPanel(view, ctx) {
  const secret = view.committed.length > 0 || view.to_act.length > 1;
  const chosen = secret ? h("p", {class: "chosen"}, `${view.committed.length} of ${view.committed.length + view.to_act.length} chosen`) : null;
  return h("div", {class: "seats"},
    h("ol", {}, view.seats.map((seat) => h("li", {class: ["seat", view.to_act.includes(seat.seat) && "to-act"],
      "data-seat": seat.seat},
      h("span", {class: "seat-name"}, ctx.names[seat.seat]),
      seat.bot ? h("span", {class: "tag"}, `bot: ${seat.bot}`) : null,
      seat.open ? h("span", {class: "tag"}, "open seat") : null,
      view.to_act.includes(seat.seat) ? h("span", {class: "tag turn"}, "▶ to act") : null,
      view.committed.includes(seat.seat) ? h("span", {class: "tag"}, "✓ chosen") : null,
      countdown(view.deadlines?.[seat.seat])))),
    chosen,
    view.result ? h("p", {class: "result"}, resultText(view, ctx)) : null);
}

function resultText(view, ctx) {
  const winners = view.result.winners || [];
  if (!winners.length) return "Game over: nobody won.";
  return `Game over: ${winners.map((s) => ctx.names[s]).join(" and ")} ${winners.length > 1 ? "share the win" : "won"}.`;
}

function countdown(deadline) {
  if (!deadline) return null;
  const el = h("time", {class: "deadline", datetime: deadline});
  const tick = () => {
    const left = Math.max(0, Math.round((Date.parse(deadline) - Date.now()) / 1000));
    el.textContent = `⏱ ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
    if (left > 0 && el.isConnected !== false) setTimeout(tick, 1000);
  };
  tick();
  return el;
}

// The event in a sentence: the game's own, else a generic one.
export function describe(event, ctx) {
  const own = page.drawer.sentence(event, ctx);
  if (own) return own;
  const name = (seat) => ctx.names[seat] ?? `seat ${seat}`;
  const data = event.data || {};
  switch (event.type) {
    case "game_created": return `The game was created for ${ctx.names.join(", ")}.`;
    case "seat_joined": return `${data.name} took seat ${data.seat}.`;
    case "choice_committed": return `${name(data.seat)} made a secret choice.`;
    case "choices_revealed": return "The secret choices were revealed.";
    case "action_taken": return `${name(data.seat)} played ${data.action?.type ?? "an action"}${data.by ? ` (${data.by})` : ""}.`;
    case "game_ended": return "The game ended.";
    case "game_sealed": return "The record was sealed: every hidden part is now revealed.";
    default: return event.type.replaceAll("_", " ");
  }
}

function controls(step) {
  const slider = h("input", {type: "range", min: 1, max: page.last, value: step, "aria-label": "Step",
    on: {input: (e) => goTo(Number(e.target.value))}});
  const button = (label, text, target, disabled) =>
    h("button", {type: "button", "aria-label": label, disabled, on: {click: () => goTo(target)}}, text);
  return h("nav", {class: "steps", "aria-label": "Steps"},
    button("First step", "«", 1, step <= 1),
    button("Previous step", "◀", step - 1, step <= 1),
    slider,
    button("Next step", "▶", step + 1, step >= page.last),
    button("Last step", "»", page.last, step >= page.last),
    page.step !== null && page.meta.status === "active"
      ? h("button", {type: "button", on: {click: () => goLive()}}, "Back to live") : null);
}

function stepUrl(step) {
  const params = new URLSearchParams();
  params.set("step", step);
  if (page.as !== null) params.set("as", page.as);
  return `${location.pathname}?${params}`;
}

async function goTo(step) {
  page.step = clampStep(step);
  history.replaceState(null, "", stepUrl(page.step));
  await show().catch(report);
}

async function goLive() {
  page.step = null;
  history.replaceState(null, "", location.pathname);
  await show().catch(report);
}

function onKey(event) {
  if (event.target instanceof HTMLInputElement && event.target.type !== "range") return;
  const now = page.step ?? page.last;
  const target = {ArrowLeft: now - 1, ArrowRight: now + 1, Home: 1, End: page.last}[event.key];
  if (target === undefined) return;
  event.preventDefault();
  goTo(target);
}

// The game stream, live: a ticket opens it as this tab's seat (an EventSource sends no Authorization).
async function follow() {
  let url = `/v1/games/${gameId}/events/stream?after=${page.last}`;
  if (page.token) {
    const ticket = await api(`/v1/games/${gameId}/stream-tickets`, {method: "POST", token: page.token});
    url = `${ticket.stream}&after=${page.last}`;
  }
  page.stream = new EventSource(url);
  const heard = async (message) => {
    const event = JSON.parse(message.data);
    if (page.events.some((e) => e.seq === event.seq)) return;
    page.events.push(event);
    page.last = Math.max(page.last, event.seq);
    if (event.type === "game_sealed") page.meta = await api(`/v1/games/${gameId}`, {token: page.token});
    if (page.step === null) await show().catch(report);
  };
  for (const type of EVENT_TYPES) page.stream.addEventListener(type, heard);
}

// Every event type of every game (an EventSource dispatches a named event only to its own listeners);
// tests/e2e/test_web.py checks this list against openapi.yaml's event unions.
export const EVENT_TYPES = [
  "action_taken", "attacked", "block_resolved", "card_claimed", "card_discarded", "card_drawn", "card_placed",
  "card_played", "cards_dealt", "cards_discarded", "cards_flipped", "cards_revealed", "choice_committed",
  "choices_revealed", "claim_declined", "coin_flipped", "damage_taken", "decks_dealt", "defeated", "first_chosen",
  "front_refilled", "game_created", "game_ended", "game_finished", "game_sealed", "hands_chosen", "injured", "moved",
  "passed", "pile_taken", "piles_swapped", "round_ended", "round_started", "samurai_placed", "seat_joined",
  "selections_revealed", "shuriken_thrown", "signs_thrown", "smoke_bombs_revealed", "smoke_requested",
  "specials_dealt", "stance_changed", "step_started", "tonfa_used",
];

function report(error) {
  page.frame = null; // the message replaces the page: the next show() builds it again
  const detail = error instanceof ApiError ? error.problem.detail || error.problem.title : String(error);
  fill(root, h("div", {class: "problem", role: "alert"}, h("h1", {}, "This game could not be shown"), h("p", {}, detail),
    h("p", {}, h("a", {href: "/"}, "Back to the games"))));
}

start().catch(report);
