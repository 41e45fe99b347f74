// /games/{id}: a game's table, live or at a step (?step=N&as=S), with its log.
//
// Live (no ?step): the latest view, followed through the game stream (a ticket when this tab holds a
// seat's token), never polled. Stepping: buttons, a slider and the keyboard (arrows, Home, End); the URL
// follows the step, so any position can be shared. The table carries data-step and data-as; every card
// data-card (tests and outside checks rely on these).
import {ApiError, api, newKey, tokens} from "../lib/api.js";
import {fill, h, morph} from "../lib/h.js";
import {buttonsOnly} from "../lib/picks.js";
import {getText, verifyTwice} from "../lib/verify.js";
import {analysis} from "./analysis.js";

const STEPS_PAGE = 1000; // the most GET /steps answers at once
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
  analysis: null, // a finished game's analysis (pages/analysis.js): its section, its marks on the log and graph
  ctx: null, // the drawing's context of the step shown
  play: null, // this seat's move being made: {version, legal, picker, selection, panel, sending, error}
  keys: new Map(), // "version:action" -> its Idempotency-Key
};

async function start() {
  const params = new URLSearchParams(location.search);
  const held = tokens.all(gameId);
  page.as = params.has("as") && params.get("as") !== "spectator" ? Number(params.get("as")) : heldSeat(held);
  page.token = page.as === null ? null : held[page.as] ?? null;
  page.meta = await api(`/v1/games/${gameId}`, {token: page.token});
  page.last = page.meta.version;
  page.step = params.has("step") ? clampStep(Number(params.get("step"))) : null;
  const drawer = import(`../games/${GAMES.includes(page.meta.game) ? page.meta.game : "generic"}.js`);
  if (page.step === null) {
    await loadLog();
  } else { // a replay: every step's view, each with its event, is the log as well (one download, not two)
    await loadSteps(1, page.last);
    page.events = [...page.steps.values()].sort((a, b) => a.step - b.step).map((item) => item.event);
  }
  page.drawer = await drawer; // fetched while the log was
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
  if (!page.steps.has(page.step)) await loadSteps(page.steps.size ? page.step : 1, page.last); // the first time: all of them
  const answer = page.steps.get(page.step);
  return {view: answer.view, step: answer.step, event: answer.event};
}

// Every step's view (GET /v1/games/{id}/steps), in pages of 1,000: stepping is then drawing only. The
// pages up to `upTo` (a step known to exist) are asked for at once, so the server builds them side by side;
// any further ones (the game went on meanwhile) follow each other.
async function loadSteps(from, upTo = from) {
  const as = page.as === null ? "" : `&as=${page.as}`;
  const get = (first) => api(`/v1/games/${gameId}/steps?from=${first}&limit=${STEPS_PAGE}${as}`, {token: page.token});
  const firsts = [];
  for (let first = from; first <= Math.max(from, upTo); first += STEPS_PAGE) firsts.push(first);
  let next = null;
  for (const part of await Promise.all(firsts.map(get))) {
    for (const item of part.items) page.steps.set(item.step, item);
    page.last = Math.max(page.last, part.last);
    next = part.next;
  }
  while (next !== null) {
    const part = await get(next);
    for (const item of part.items) page.steps.set(item.step, item);
    page.last = Math.max(page.last, part.last);
    next = part.next;
  }
}

// Draw the step shown. The page's frame (the log, the record panel) is built once; a step redraws only the
// table, the header and the controls, and moves the log's highlight: stepping stays under a frame.
async function show() {
  const wanted = page.step;
  const {view, step, event} = await viewNow();
  if (page.step !== wanted) return; // the reader moved on while this view was on its way: theirs is drawn
  const ctx = {as: page.as, names: view.seats.map((s) => s.name ?? `seat ${s.seat}`), view, event};
  page.ctx = ctx;
  if (!page.frame) page.frame = buildFrame();
  const {head, table, log, steps, play} = page.frame;
  if (log.dataset.count !== String(page.events.length)) fillLog(log, ctx);
  log.querySelector("li.current")?.classList.remove("current");
  const current = log.querySelector(`li[data-seq='${step}']`);
  current?.classList.add("current");
  if (current) keepInView(log.parentElement, current);
  fill(head, header(view, step));
  table.dataset.step = step;
  table.dataset.as = page.as === null ? "spectator" : page.as;
  table.dataset.game = view.game;
  table.setAttribute("aria-label", `The table at step ${step}`);
  morph(table, seatsPanel(view, ctx), page.drawer.drawTable(view, ctx)); // only what changed is repainted
  steps.update(step);
  fill(play, playPanel(view, ctx));
  page.analysis.update(step, ctx);
}

// Scroll the log's box (not the page) so the current line shows. It runs before the step changes anything,
// while the layout is still the one painted, so reading it costs nothing (scrollIntoView after the table is
// redrawn would lay the page out again in the middle of the step: a third of a step's time).
function keepInView(box, item) {
  const top = item.offsetTop;
  const bottom = top + item.offsetHeight;
  if (top < box.scrollTop || bottom > box.scrollTop + box.clientHeight) {
    box.scrollTop = Math.max(0, top - (box.clientHeight - item.offsetHeight) / 2);
  }
}

function buildFrame() {
  const frame = {head: h("div", {class: "game-head"}),
    table: h("section", {class: "table", on: {click: onPick, keydown: onPick}}),
    log: h("ol"), steps: controls(), play: h("div")};
  page.analysis = analysis({gameId, last: () => page.last, finished: () => page.meta.status === "finished",
    log: () => page.frame?.log, goTo, stepUrl, words: (action, ctx) => page.drawer.actionLabel?.(action, ctx) || actionText(action)});
  fill(root, frame.head,
    h("div", {class: "game-layout"}, h("div", {class: "table-column"}, frame.table, page.analysis.below),
      h("aside", {class: "log", "aria-label": "Event log"}, h("h2", {}, "Log"), frame.log)),
    frame.steps, page.analysis.slot, frame.play, auditPanel());
  return frame;
}

// A seat's move (what it chose) is a line of its own; what followed from it is indented under it.
const MOVES = new Set(["action_taken", "choice_committed"]);

function fillLog(log, ctx) {
  fill(log, page.events.map((event) => h("li", {"data-seq": event.seq, class: MOVES.has(event.type) ? "move" : "effect"},
    h("a", {href: stepUrl(event.seq), on: {click: (e) => { e.preventDefault(); goTo(event.seq); }}},
      h("span", {class: "seq"}, event.seq), " ", describe(event, ctx)))));
  log.dataset.count = String(page.events.length);
}

// The record: download it, or verify it (lib/verify.js): in this browser with the JavaScript verifier
// (chain, commitments, deal, signature, log inclusion), and by the server (POST /v1/audits, what anyone can
// do with the file: the rules re-run). Both verdicts are shown, combined in .verdict's data-verdict, with
// the first bad event either names marked in the log.
function auditPanel() {
  const verdict = h("div", {class: "verdict", role: "status"});
  const download = async () => {
    const record = await api(`/v1/games/${gameId}/record`, {token: page.token});
    const link = h("a", {href: URL.createObjectURL(new Blob([JSON.stringify(record, null, 1)], {type: "application/json"})),
      download: `${gameId}.record.json`});
    document.body.append(link);
    link.click();
    link.remove();
  };
  const verify = async () => {
    delete verdict.dataset.verdict;
    verdict.textContent = "Verifying…";
    const text = await getText(`/v1/games/${gameId}/record`, {token: page.token}); // as text: the exact bytes
    const {first_bad_event: bad} = await verifyTwice(verdict, text);
    markBad(bad);
  };
  const failed = (error) => { verdict.textContent = error instanceof ApiError ? error.message : String(error); };
  return h("section", {class: "audit", "aria-label": "Audit"}, h("h2", {}, "Record"),
    h("button", {type: "button", on: {click: () => download().catch(failed)}}, "Download the record"), " ",
    h("button", {type: "button", "data-verify": "", on: {click: () => verify().catch(failed)}}, "Verify it"), verdict);
}

function markBad(seq) {
  for (const item of document.querySelectorAll(".log li.bad")) item.classList.remove("bad");
  if (seq) document.querySelector(`.log li[data-seq='${seq}']`)?.classList.add("bad");
}

// Playing, with this tab's seat token: the seat's legal actions (GET /actions) become clickable on the
// table (lib/picks.js: a card, then a cell or a target), with buttons for those that have nothing to click
// and the whole list as buttons too (for keyboards and screen readers). Each action is sent with an
// Idempotency-Key (the same for the same action at the same version) and the expected version, so a
// double click or a retry never acts twice.
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
    page.play = null;
    return fill(panel, h("p", {}, view.committed.includes(page.as) ? "Your choice is committed: it is revealed when every seat has chosen." : "Waiting for the others."));
  }
  if (page.play?.version === view.version) {
    page.play.panel = panel;
    drawPlay(ctx);
    return panel;
  }
  fill(panel, h("p", {}, "Your move…"));
  api(`/v1/games/${gameId}/actions`, {token: page.token}).then((legal) => {
    if (legal.version !== view.version || page.step !== null) return; // a newer view is on its way
    const picker = page.drawer.picker?.(legal, view, ctx) ?? buttonsOnly(legal.actions);
    page.play = {version: legal.version, legal, picker, selection: [], panel, sending: false, error: ""};
    drawPlay(ctx);
  }).catch(report);
  return panel;
}

// The play panel and the table's marks for the selection as it stands.
function drawPlay(ctx) {
  const play = page.play;
  const {options, complete} = play.picker.next(play.selection);
  markTable(options, play.selection);
  const label = (action) => page.drawer.actionLabel?.(action, ctx) || actionText(action);
  const button = (action, extra = {}) => h("button", {type: "button", class: "action", "data-action": JSON.stringify(action),
    disabled: play.sending, on: {click: () => act(action)}, ...extra}, label(action));
  const chosen = play.selection.map((token) => page.frame.table.querySelector(`[data-pick="${CSS.escape(token)}"]`)
    ?.getAttribute("aria-label") ?? token);
  const hint = options.size
    ? (play.selection.length ? "Click a highlighted place to go on, or a chosen one to take it back." : "Click a highlighted card or place on the table.")
    : "";
  const listed = play.legal.actions.length <= 300 ? play.legal.actions : [];
  fill(play.panel, h("h2", {}, "Your move"),
    h("p", {class: "hint", "aria-live": "polite"}, hint,
      chosen.length ? h("span", {class: "chosen-picks"}, ` Chosen: ${chosen.join(" → ")}.`) : null),
    complete.length ? h("div", {class: "actions confirm"}, complete.map((action) => button(action, {"data-confirm": ""}))) : null,
    h("div", {class: "actions"},
      play.picker.buttons.map((action) => button(action)),
      play.selection.length ? h("button", {type: "button", "data-clear": "", on: {click: () => { play.selection = []; drawPlay(ctx); }}}, "Clear") : null),
    h("p", {class: "error", role: "alert"}, play.error),
    listed.length ? h("details", {class: "all-actions"}, h("summary", {}, `Every legal action (${listed.length})`),
      h("div", {class: "actions"}, listed.map((action) => button(action)))) : null);
  if (!play.sending && complete.length === 1 && options.size === 0) act(complete[0]);
}

// data-pick elements of the table: pickable (a button, reachable by Tab) or picked (with its order: the
// click's number, or what the game's pickOrder(token, selection) says, e.g. which attack a card joins).
function markTable(options, selection) {
  for (const el of page.frame.table.querySelectorAll("[data-pick]")) {
    const token = el.dataset.pick;
    const at = selection.indexOf(token);
    const pickable = !page.play?.sending && (options.has(token) || at >= 0);
    el.classList.toggle("pickable", pickable);
    el.classList.toggle("picked", at >= 0);
    if (at >= 0) el.dataset.order = page.drawer.pickOrder?.(token, selection) ?? String(at + 1);
    else delete el.dataset.order;
    if (pickable) {
      el.setAttribute("role", "button");
      el.tabIndex = 0;
      el.setAttribute("aria-pressed", at >= 0 ? "true" : "false");
    } else if (el.getAttribute("role") === "button") {
      el.setAttribute("role", "img");
      el.removeAttribute("tabindex");
      el.removeAttribute("aria-pressed");
    }
  }
}

// A click (or Enter/Space) on a pickable place: add it to the selection, or take it back with what followed.
function onPick(event) {
  if (event.type === "keydown" && event.key !== "Enter" && event.key !== " ") return;
  const el = event.target.closest?.("[data-pick].pickable");
  if (!el || !page.play || page.play.sending) return;
  event.preventDefault();
  const token = el.dataset.pick;
  const at = page.play.selection.indexOf(token);
  page.play.selection = at >= 0 ? page.play.selection.slice(0, at) : [...page.play.selection, token];
  page.play.error = "";
  drawPlay(page.ctx);
  page.frame.table.querySelector(`[data-pick="${CSS.escape(token)}"]`)?.focus();
}

function actionText(action) {
  return Object.entries(action).map(([k, v]) => (k === "type" ? v : `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`)).join(", ");
}

async function act(action) {
  const play = page.play;
  const id = `${play.version}:${JSON.stringify(action)}`;
  if (!page.keys.has(id)) page.keys.set(id, newKey()); // a retry of the same action reuses its key
  play.sending = true;
  drawPlay(page.ctx);
  try {
    await api(`/v1/games/${gameId}/actions`, {method: "POST", token: page.token, key: page.keys.get(id),
      body: {action, expected_version: play.version}});
  } catch (error) {
    play.sending = false;
    play.selection = [];
    play.error = error instanceof ApiError ? error.message : String(error);
    drawPlay(page.ctx);
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

// A search seat's budget, as its record commits to it (the tag's tooltip); nothing for the other bots.
function botBudget(settings) {
  if (!settings) return undefined;
  if (settings.algorithm === "expectimax") {
    return `expectimax: ${settings.depth} placements ahead, to the end from ${settings.exact} empty cells`;
  }
  return `${settings.algorithm}: ${settings.iterations} iterations per decision`;
}

// Who sits where, whose turn it is, who has chosen, and each seat's deadline as a countdown.
function seatsPanel(view, ctx) {
  const secret = view.committed.length > 0 || view.to_act.length > 1;
  const chosen = secret ? h("p", {class: "chosen"}, `${view.committed.length} of ${view.committed.length + view.to_act.length} chosen`) : null;
  return h("div", {class: "seats"},
    h("ol", {}, view.seats.map((seat) => h("li", {class: ["seat", view.to_act.includes(seat.seat) && "to-act"],
      "data-seat": seat.seat},
      h("span", {class: "seat-name"}, ctx.names[seat.seat]),
      seat.bot ? h("span", {class: "tag", title: botBudget(seat.bot_settings)}, `bot: ${seat.bot}`) : null,
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
  return tick(h("time", {class: "deadline", datetime: deadline}));
}

// A deadline's time left, from its datetime: every one on the page is told again each second (one timer).
function tick(el) {
  const left = Math.max(0, Math.round((Date.parse(el.getAttribute("datetime")) - Date.now()) / 1000));
  const text = `⏱ ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
  if (el.textContent !== text) el.textContent = text;
  el.setAttribute("aria-label", `${Math.floor(left / 60)} min ${left % 60} s left`);
  return el;
}

setInterval(() => { for (const el of document.querySelectorAll("time.deadline")) tick(el); }, 1000);

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

// The step controls, built once and updated in place at each step (stepping must stay under a frame).
function controls() {
  const slider = h("input", {type: "range", min: 1, "aria-label": "Step", "aria-valuetext": "",
    on: {input: (e) => goTo(Number(e.target.value))}});
  const now = () => page.step ?? page.last;
  const button = (label, text, target) =>
    h("button", {type: "button", "aria-label": label, on: {click: () => goTo(target())}}, text);
  const parts = {
    first: button("First step", "«", () => 1),
    previous: button("Previous step", "◀", () => now() - 1),
    next: button("Next step", "▶", () => now() + 1),
    last: button("Last step", "»", () => page.last),
    live: h("button", {type: "button", on: {click: () => goLive()}}, "Back to live"),
    slider,
  };
  const nav = h("nav", {class: "steps", "aria-label": "Steps"}, parts.first, parts.previous, slider, parts.next, parts.last, parts.live);
  nav.update = (step) => {
    slider.max = page.last;
    slider.value = step;
    slider.setAttribute("aria-valuetext", `step ${step} of ${page.last}`);
    parts.first.disabled = parts.previous.disabled = step <= 1;
    parts.next.disabled = parts.last.disabled = step >= page.last;
    parts.live.hidden = !(page.step !== null && page.meta.status === "active");
  };
  return nav;
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
    if (page.step === null && waiting === 0) await show().catch(report); // a burst is drawn once, at its end
  };
  // One event at a time, in the order heard: a handler that awaits the API must not let a later event's
  // answer be drawn before an earlier one's (the older view would stay on the table).
  let queue = Promise.resolve();
  let waiting = 0;
  const inOrder = (message) => {
    waiting += 1;
    queue = queue.then(() => { waiting -= 1; return heard(message); }).catch(report);
  };
  for (const type of EVENT_TYPES) page.stream.addEventListener(type, inOrder);
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
