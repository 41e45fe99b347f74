// kiri-ai: the duel's table. The battlefield (6 or 8 spaces) with both samurai on it, their stance and
// health; per samurai its hand (face down where the viewer may not see it), the two-part program of the
// round (each card turned face up as its step is revealed), the card set aside and the special played;
// the special out of play (face down until the end); and what the round's steps did.
//
// Each card is drawn once, where it lies now (docs/rules/kiri-ai.md, "View"): in hand (`hand`, or
// `hand_sizes` face down), played this round (`last_round` up to `step`), set aside (`set_aside`), out of
// the game (a played special, once its round is over) or out of play (the third special).
import {card, pile} from "../lib/cards.js";
import {h} from "../lib/h.js";
import {listPicker} from "../lib/picks.js";

const STYLE = "/app/games/kiri-ai.css";
if (!document.querySelector(`link[href="${STYLE}"]`)) {
  document.head.append(h("link", {rel: "stylesheet", href: STYLE}));
}

const SIDES = [{name: "Red", mark: "◆", cls: "red"}, {name: "Blue", mark: "●", cls: "blue"}];
const CARDS = {
  "approach-retreat": {label: "Approach / Retreat", kind: "move", detail: "1 space on, or 1 back"},
  "charge-change-stance": {label: "Charge / Change stance", kind: "move", detail: "2 spaces on, or switch stance"},
  "high-strike": {label: "High Strike", kind: "attack", detail: "▲ heaven, distance 2"},
  "low-strike": {label: "Low Strike", kind: "attack", detail: "▼ earth, distance 1"},
  "balanced-strike": {label: "Balanced Strike", kind: "attack", detail: "either stance, distance 0"},
  "kesa": {label: "Kesa Strike", kind: "special", detail: "▲ heaven, distance 0-1"},
  "zan-tetsu": {label: "Zan-Tetsu Strike", kind: "special", detail: "▼ earth, distance 2-3"},
  "counterattack": {label: "Counterattack", kind: "special", detail: "turns a landing attack"},
};
const KINDS = {move: {symbol: "⇄", name: "move"}, attack: {symbol: "⚔", name: "attack"},
  special: {symbol: "★", name: "special"}};
const FACE_CARD = {"approach": "approach-retreat", "retreat": "approach-retreat", "charge": "charge-change-stance",
  "change-stance": "charge-change-stance", "high-strike": "high-strike", "low-strike": "low-strike",
  "balanced-strike": "balanced-strike"};
const STANCES = {heaven: "▲ Heaven", earth: "▼ Earth"};
const ORDINAL = ["", "1st", "2nd"];

// A card of the game by id, face up.
function kiriCard(id, {small = false} = {}) {
  const known = CARDS[id] || {label: id, kind: "attack", detail: ""};
  const kind = KINDS[known.kind];
  const el = card({id, label: known.label, value: kind.symbol, symbol: kind.name, suit: `kiri-${known.kind}`,
    detail: known.detail, small});
  if (id === "counterattack") el.querySelector(".name").textContent = "Counter\u00adattack"; // a soft hyphen
  return el;
}

function hidden(n, options = {}) {
  return Array.from({length: n}, () => card({hidden: true, ...options}));
}

// A face as people say it: "change-stance" -> "Change stance"; a special by its own name.
export function faceName(face, special) {
  if (face === "special") return special ? CARDS[special].label : "their special";
  if (CARDS[face]) return CARDS[face].label;
  return face.charAt(0).toUpperCase() + face.slice(1).replaceAll("-", " ");
}

// The card a face of `seat` is printed on (a special: the one that seat played).
function cardOf(state, seat, face) {
  return face === "special" ? state.specials_used[seat] : FACE_CARD[face];
}

// The steps of the current round already resolved (the last round's stay listed after it ends, for the log).
function resolvedNow(state) {
  return state.step > 0 ? state.last_round.filter((log) => log.step <= state.step) : [];
}

export function drawTable(view, ctx) {
  const state = view.state;
  const own = view.you ?? ctx.as;
  return h("div", {class: ["kiri", `kiri-${state.battlefield}`]},
    summary(view),
    battlefield(state, ctx),
    h("div", {class: "kiri-sides"}, [1, 0].map((seat) => side(view, seat, own, ctx))),
    h("div", {class: "kiri-bottom"}, roundLog(state, ctx), outOfPlay(state)));
}

function summary(view) {
  const state = view.state;
  const parts = [];
  if (state.round > 0) parts.push(`Round ${state.round} of ${state.max_rounds}`);
  parts.push(state.battlefield === "advanced" ? "advanced battlefield (8 spaces)" : "standard battlefield (6 spaces)");
  if (state.distance !== null) parts.push(`distance ${state.distance}`);
  let doing = "";
  if (view.phase === "deal") doing = "Dealing the specials…";
  else if (view.phase === "setup") doing = "Each samurai picks a start space and stance in secret.";
  else if (view.phase === "program") {
    doing = ["Both samurai program two cards in secret.", "Step 1 resolved; the second cards are revealed next.",
      "Both steps resolved; the round ends."][state.step];
  } else if (view.phase === "over") doing = "The duel is over.";
  return h("div", {class: "kiri-summary"}, h("p", {class: "kiri-facts"}, parts.join(" · ")),
    doing ? h("p", {class: "kiri-doing"}, doing) : null);
}

function battlefield(state, ctx) {
  const spaces = Array.from({length: state.spaces}, (_, i) => i);
  const on = (space) => [0, 1].filter((seat) => state.samurai[seat].space === space);
  return h("figure", {class: "kiri-field", "aria-label": "The battlefield"},
    h("figcaption", {}, "Battlefield: ", h("span", {class: "kiri-dir"}, "● Blue's side ← → Red's side ◆")),
    h("ol", {class: "kiri-spaces"},
      spaces.map((space) => h("li", {class: ["kiri-space", on(space).length && "occupied"], "data-space": space,
        "data-pick": `space:${space}`, "aria-label": `space ${space}`},
        h("span", {class: "kiri-space-no"}, space),
        state.samurai[0].space === null ? startZone(state, space) : null,
        on(space).map((seat) => samuraiToken(state.samurai[seat], seat, ctx))))),
    state.samurai[0].space === null
      ? h("p", {class: "kiri-unplaced"}, "The samurai are not on the battlefield yet.") : null);
}

// Before an advanced start is revealed: where each samurai may start (red 4-6, blue 1-3).
function startZone(state, space) {
  if (state.battlefield !== "advanced") return null;
  const seat = space >= 4 && space <= 6 ? 0 : space >= 1 && space <= 3 ? 1 : null;
  if (seat === null) return null;
  return h("span", {class: ["kiri-zone", SIDES[seat].cls]}, `${SIDES[seat].mark} ${SIDES[seat].name} may start here`);
}

function samuraiToken(samurai, seat, ctx) {
  const side = SIDES[seat];
  const status = samurai.defeated ? "defeated" : samurai.injured ? "injured" : "unhurt";
  return h("div", {class: ["kiri-samurai", side.cls, samurai.stance, status], "data-seat": seat,
    role: "img", "aria-label": `${side.name} samurai ${ctx.names[seat]}, ${samurai.stance}, ${status}`},
  h("span", {class: "kiri-mark", "aria-hidden": "true"}, side.mark),
  h("span", {class: "kiri-who", "aria-hidden": "true"}, ctx.names[seat]),
  h("span", {class: "kiri-stance", "aria-hidden": "true"}, STANCES[samurai.stance] || ""),
  h("span", {class: "kiri-hp", "aria-hidden": "true"}, health(samurai)));
}

function health(samurai) {
  if (samurai.defeated) return "✖ defeated";
  return samurai.injured ? "♥♡ injured" : "♥♥ unhurt";
}

// One samurai's side of the table: who, stance, health, program slots, hand, set aside, spent special.
function side(view, seat, own, ctx) {
  const state = view.state;
  const who = SIDES[seat];
  const samurai = state.samurai[seat];
  const known = state.hands?.[seat] ?? (seat === own ? state.hand : null);
  const played = resolvedNow(state).map((log) => ({step: log.step, face: log.actions[seat],
    id: cardOf(state, seat, log.actions[seat])}));
  const spent = state.specials_used[seat];
  const spentElsewhere = spent && !played.some((p) => p.id === spent);
  const mine = seat === own && view.my_choice?.type === "program" ? view.my_choice : null;
  const programming = seat === own && view.phase === "program";
  const hand = known ? known.map((id) => programmedMark(programming ? withFaces(kiriCard(id), id) : kiriCard(id), id, mine))
    : hidden(state.hand_sizes[seat]);
  return h("section", {class: ["kiri-side", who.cls, view.to_act.includes(seat) && "to-act"], "data-seat": seat,
    "aria-label": `${who.name} samurai, ${ctx.names[seat]}`},
  h("h3", {}, h("span", {class: "kiri-mark", "aria-hidden": "true"}, who.mark), ` ${who.name}: ${ctx.names[seat]}`,
    h("span", {class: "kiri-state"}, samurai.stance ? STANCES[samurai.stance] : "stance secret", " · ",
      health(samurai), samurai.space !== null ? ` · space ${samurai.space}` : "")),
  program(view, seat, played, mine),
  pile(known ? `Hand (${known.length})` : `Hand (${state.hand_sizes[seat]}, face down)`, hand, {empty: "empty"}),
  h("div", {class: "kiri-row"},
    pile("Set aside this round", state.set_aside[seat] ? [kiriCard(state.set_aside[seat], {small: true})] : [],
      {empty: "nothing"}),
    pile("Special spent", spentElsewhere ? [kiriCard(spent, {small: true})] : [],
      {empty: spent ? "played this round" : "not yet"})));
}

// In one's own hand, the cards of the committed program say so ("1st", "2nd").
function programmedMark(el, id, mine) {
  if (!mine) return el;
  const slots = [mine.first, mine.second].map((face, i) => {
    const programmed = face === "special" ? CARDS[id]?.kind === "special" && id : FACE_CARD[face];
    return programmed === id ? ORDINAL[i + 1] : null;
  }).filter(Boolean);
  if (!slots.length) return el;
  el.classList.add("kiri-programmed");
  el.append(h("span", {class: "kiri-badge"}, slots.join("+")));
  el.setAttribute("aria-label", `${el.getAttribute("aria-label")}, programmed ${slots.join(" and ")}`);
  return el;
}

// A card of one's own hand while programming: each face it may be played as, to click (the first click
// is the first action, the second the second): a one-face card is clicked whole, a two-face card on a face.
function withFaces(el, id) {
  const faces = Object.entries(FACE_CARD).filter(([, card]) => card === id).map(([face]) => face);
  if (CARDS[id]?.kind === "special") faces.push("special");
  if (faces.length === 1) {
    el.dataset.pick = `face:${faces[0]}`;
    return el;
  }
  el.classList.add("kiri-two-faced");
  el.append(h("span", {class: "kiri-faces"}, faces.map((face) => h("span", {class: "kiri-face", "data-pick": `face:${face}`,
    role: "img", "aria-label": faceName(face, null)}, faceName(face, null)))));
  return el;
}

// The round's program: two slots, each turned face up when its step is revealed (before round 1 on the
// advanced battlefield: the secret start instead).
function program(view, seat, played, mine) {
  const state = view.state;
  const chosen = view.committed.includes(seat);
  if (view.phase === "deal") return null;
  if (view.phase === "setup") {
    const start = view.my_choice?.type === "setup" && seat === (view.you ?? null) ? view.my_choice : null;
    const note = start ? `space ${start.space} in ${start.stance} (secret)` : chosen ? "chosen, secret"
      : "choosing…";
    const choosing = seat === view.you && view.to_act.includes(seat);
    return h("div", {class: "kiri-program"}, h("div", {class: "kiri-slot pending"},
      h("span", {class: "kiri-slot-name"}, `Start: ${note}`),
      choosing ? h("span", {class: "kiri-stances"}, "Stance: ", Object.entries(STANCES).map(([stance, text]) =>
        h("span", {class: ["kiri-stance-pick", stance], "data-pick": `stance:${stance}`, role: "img",
          "aria-label": `start in ${stance}`}, text))) : null));
  }
  const slot = (step) => {
    const done = played.find((p) => p.step === step);
    if (done) {
      return h("div", {class: "kiri-slot revealed"}, h("span", {class: "kiri-slot-name"},
        `${ORDINAL[step]}: ${faceName(done.face, done.id)}`), kiriCard(done.id, {small: true}));
    }
    let note = "—";
    if (mine) note = `${faceName(step === 1 ? mine.first : mine.second, null)} (secret)`;
    else if (chosen || (view.phase === "program" && state.step > 0)) note = "programmed, secret";
    else if (view.phase === "program" && view.to_act.includes(seat)) note = "choosing…";
    return h("div", {class: "kiri-slot pending"}, h("span", {class: "kiri-slot-name"}, `${ORDINAL[step]}: ${note}`));
  };
  return h("div", {class: "kiri-program", "aria-label": "This round's program"}, slot(1), slot(2));
}

// What the steps of this (or the last) round did, in words.
function roundLog(state, ctx) {
  if (!state.last_round.length) return h("div", {class: "kiri-log"}, h("h4", {}, "This round"),
    h("p", {class: "empty"}, "Nothing resolved yet."));
  const ended = state.step === 0;
  return h("div", {class: "kiri-log"}, h("h4", {}, ended ? `Last round (round ${Math.max(state.round - 1, 1)})` : "This round"),
    h("ol", {}, state.last_round.map((log) => h("li", {},
      h("strong", {}, `Step ${log.step}: `),
      [0, 1].map((seat) => h("span", {class: ["kiri-played", SIDES[seat].cls]},
        `${SIDES[seat].mark} ${faceName(log.actions[seat], cardOf(state, seat, log.actions[seat]))}`)),
      log.moves.map((m) => h("span", {class: "kiri-fx"}, m.from === m.to
        ? `${ctx.names[m.seat]} could not ${m.action}` : `${ctx.names[m.seat]} ${m.from}→${m.to}`)),
      log.attacks.map((a) => h("span", {class: ["kiri-fx", `result-${a.result}`]},
        `${ctx.names[a.seat]}'s ${faceName(a.attack, a.attack)}: ${RESULTS[a.result]}`)),
      log.damage.map((d) => h("span", {class: "kiri-fx damage"},
        `${ctx.names[d.seat]} ${d.result === "defeated" ? "✖ defeated" : "♡ injured"}`))))));
}

const RESULTS = {hit: "✔ hit", miss: "✗ missed", cancelled: "⇆ cancelled", countered: "↺ countered"};

// The third special: out of play, seen by nobody until the end.
function outOfPlay(state) {
  if (state.round === 0 && !state.set_aside_special) return null;
  const third = state.set_aside_special;
  return pile("Special out of play", [third ? kiriCard(third, {small: true}) : card({hidden: true, small: true})]);
}

// ---- playing on the table

// The program: two faces of two different cards of the hand, in order (first, then second). The advanced
// start: a space of one's start zone and a stance, in either order.
export function picker(legal) {
  const setup = legal.actions.some((action) => action.type === "setup");
  return listPicker(legal.actions, (action) => {
    if (action.type === "program") return [`face:${action.first}`, `face:${action.second}`];
    if (action.type === "setup") return [`space:${action.space}`, `stance:${action.stance}`];
    return null;
  }, {ordered: !setup});
}

export function actionLabel(action) {
  switch (action.type) {
    case "program": return `Program ${faceName(action.first, null)}, then ${faceName(action.second, null)}`;
    case "setup": return `Start on space ${action.space} in ${action.stance}`;
    default: return null;
  }
}

export function sentence(event, ctx) {
  const data = event.data || {};
  const name = (seat) => `${ctx.names[seat] ?? `seat ${seat}`} (${SIDES[seat]?.name ?? "?"})`;
  const place = (s) => `space ${s.space} in ${s.stance}`;
  switch (event.type) {
    case "specials_dealt": {
      const held = [0, 1].filter((s) => data.private?.[String(s)]?.special)  // the viewer's own, or both once sealed
        .map((s) => `${ctx.names[s]} holds ${CARDS[data.private[String(s)].special]?.label}`);
      const start = data.samurai ? ` ${name(0)} starts on ${place(data.samurai[0])}, ${name(1)} on ${place(data.samurai[1])}.`
        : " Each samurai will pick a start in secret.";
      return `The specials were dealt${held.length ? ` (${held.join(", ")})` : ""} on the ${data.battlefield} battlefield.${start}`;
    }
    case "samurai_placed":
      return `The samurai took their places: ${name(0)} on ${place(data.samurai[0])}, ${name(1)} on ${place(data.samurai[1])}.`;
    case "step_started":
      return `Round ${data.round}, step ${data.step}: ${ctx.names[0]} played ${faceName(data.actions[0], data.cards[0])}, `
        + `${ctx.names[1]} ${faceName(data.actions[1], data.cards[1])}.`;
    case "moved":
      return data.from === data.to ? `${ctx.names[data.seat]} tried to ${data.action} but could not move.`
        : `${ctx.names[data.seat]} ${data.action === "charge" ? "charged" : `${data.action}ed`} from space ${data.from} to ${data.to}.`;
    case "stance_changed":
      return `${ctx.names[data.seat]} switched to ${data.stance}${data.by === "change-stance" ? "" : ` after ${faceName(data.by, data.by)}`}.`;
    case "attacked":
      return `${ctx.names[data.seat]}'s ${faceName(data.attack, data.attack)} from ${data.stance} at distance ${data.distance}: `
        + `${{hit: "a hit", miss: "a miss", cancelled: "cancelled", countered: "countered"}[data.result] ?? data.result}.`;
    case "injured":
      return `${ctx.names[data.seat]} was injured by ${ctx.names[data.by]}.`;
    case "defeated":
      return `${ctx.names[data.seat]} was defeated by ${ctx.names[data.by]}: the duel is over.`;
    case "round_ended": {
      const aside = [0, 1].map((s) => data.set_aside[s] ? `${ctx.names[s]} sets ${CARDS[data.set_aside[s]].label} aside`
        : `${ctx.names[s]} sets nothing aside`);
      return `Round ${data.round} ended: ${aside.join(", ")}.`;
    }
    default:
      return null;
  }
}
