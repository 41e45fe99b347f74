// San Ban's table: the 3x3 board (each card with its four edge powers, its element, its owner and a
// mark when it was flipped), both hands (face down where the viewer may not see them), what each seat
// left out of its deck, the mode's rules, the coin, the first player, the scores and the hardcore claim.
// The viewer's seat sits at the bottom (a spectator's view: seat 0 at the bottom).
import {h} from "../lib/h.js";
import {card} from "../lib/cards.js";
import {choosePicker, listPicker} from "../lib/picks.js";

const STYLE = "/app/games/san-ban.css";
const CELLS = ["top-left", "top", "top-right", "left", "centre", "right", "bottom-left", "bottom", "bottom-right"];
// Each element has a colour (app.css's suit-*), a symbol that renders without emoji fonts, and a name.
const ELEMENTS = {water: "≈", fire: "▲", metal: "◆", wood: "♣", earth: "■"};
const SEAT_MARKS = ["●", "○"]; // seat colours are also told by a mark and a name
const MODES = {
  standard: {rules: ["capture"], about: "Hands shown to both; each player picks a card every turn."},
  gamer: {rules: ["capture"], about: "Hands secret; each player fixed the order of play before the game."},
  advanced: {rules: ["capture", "elemental"], about: "Hands secret; the order of play was shuffled and nobody knows it."},
  hardcore: {rules: ["capture", "elemental", "add"], about: "Hands shown to both; the winner may claim a card of the loser."},
};
const RULES = {capture: "capture", elemental: "elemental", add: "add"};

function loadStyle() {
  if (document.querySelector(`link[href="${STYLE}"]`)) return;
  document.head.append(h("link", {rel: "stylesheet", href: STYLE}));
}

// A power as printed: 1-9, J, Q, K, A.
export function power(n) {
  return {10: "J", 11: "Q", 12: "K", 13: "A"}[n] ?? String(n);
}

function title(word) {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

// A card's short name ("Fire sb-032") and its full accessible name.
function shortName(id, def) {
  return def?.element ? `${title(def.element)} ${id}` : id;
}

function fullName(id, def) {
  if (!def) return id;
  const edges = `top ${power(def.top)}, right ${power(def.right)}, bottom ${power(def.bottom)}, left ${power(def.left)}`;
  return `${shortName(id, def)} (${edges}${def.element ? "" : ", no element"})`;
}

// One San Ban card, face up: the four edge powers on its four sides, its element's symbol and name.
function triad(id, def, {owner, names, flippedFrom, small, tag} = {}) {
  const element = def?.element ?? null;
  let label = fullName(id, def);
  if (owner !== undefined && owner !== null) label += `, ${names[owner]}'s card`;
  if (flippedFrom !== undefined && flippedFrom !== null) label += `, flipped from ${names[flippedFrom]}`;
  const el = card({id, label: id, suit: element, symbol: element ? ELEMENTS[element] : null,
    value: element ? "" : "·", small});
  el.classList.add("sb-card");
  el.dataset.pick = `card:${id}`;
  if (owner !== undefined && owner !== null) el.classList.add(`sb-owner-${owner}`);
  el.setAttribute("aria-label", label);
  el.setAttribute("title", label);
  if (def) {
    for (const side of ["top", "right", "bottom", "left"]) {
      el.append(h("span", {class: `sb-edge sb-${side}`, "aria-hidden": "true"}, power(def[side])));
    }
  }
  el.append(h("span", {class: "sb-element", "aria-hidden": "true"}, element ? title(element) : "no element"));
  if (owner !== undefined && owner !== null) {
    el.append(h("span", {class: "sb-owner", "aria-hidden": "true"}, `${SEAT_MARKS[owner]} ${names[owner]}`));
  }
  if (flippedFrom !== undefined && flippedFrom !== null) {
    el.append(h("span", {class: "sb-flipped", "aria-hidden": "true", title: "flipped"}, "↻"));
  }
  if (tag) el.append(h("span", {class: "sb-tag", "aria-hidden": "true"}, tag));
  return el;
}

function hidden(n, small) {
  return Array.from({length: Math.max(0, n)}, () => card({hidden: true, small}));
}

// Whose five a card was, where the view says so (the seat whose chosen five hold it), else null.
function originalOwner(state, id) {
  for (const seat of [0, 1]) if (state.chosen?.[seat]?.includes(id)) return seat;
  return null;
}

// The seat's deck where the viewer may see it: its own, or both once the game is over.
function knownDeck(view, seat) {
  const state = view.state;
  if (state.decks) return state.decks[seat];
  if (state.deck && view.you === seat) return state.deck;
  return null;
}

export function drawTable(view, ctx) {
  loadStyle();
  const state = view.state;
  const names = ctx.names;
  const bottom = ctx.as === null || ctx.as === undefined ? 0 : ctx.as;
  const top = 1 - bottom;
  return h("div", {class: ["sb-table", `sb-mode-${state.mode}`]},
    modePanel(view, ctx),
    seatArea(view, top, names, "sb-far"),
    h("div", {class: "sb-middle"}, board(view, names), statusPanel(view, names)),
    seatArea(view, bottom, names, "sb-near"));
}

function modePanel(view) {
  const mode = view.state.mode;
  const info = MODES[mode] ?? {rules: ["capture"], about: ""};
  return h("div", {class: "sb-mode"},
    h("span", {class: "sb-mode-name"}, `${title(mode)} mode`),
    h("span", {class: "sb-rules", "aria-label": "Flip rules in play"},
      Object.keys(RULES).map((rule) => h("span", {class: ["sb-rule", info.rules.includes(rule) ? "on" : "off"]},
        info.rules.includes(rule) ? `✓ ${rule}` : `✗ ${rule}`))),
    h("span", {class: "sb-about"}, info.about));
}

// The 3x3 board: each cell empty (its number) or a card in its owner's colour, marked and named.
function board(view, names) {
  const state = view.state;
  return h("div", {class: "sb-board", role: "grid", "aria-label": "The board"},
    [0, 1, 2].map((row) => h("div", {class: "sb-row", role: "row"}, [0, 1, 2].map((col) => {
      const cell = row * 3 + col;
      const placed = state.board[cell];
      if (!placed) {
        return h("div", {class: "sb-cell empty", role: "gridcell", "data-cell": cell, "data-pick": `cell:${cell}`,
          "aria-label": `the ${CELLS[cell]} cell, empty`},
          h("span", {class: "sb-cell-name"}, CELLS[cell]));
      }
      const first = originalOwner(state, placed.card);
      const flippedFrom = first !== null && first !== placed.owner ? first : null;
      return h("div", {class: ["sb-cell", `sb-owner-${placed.owner}`], role: "gridcell", "data-cell": cell,
        "data-owner": placed.owner},
        triad(placed.card, state.cards[placed.card], {owner: placed.owner, names, flippedFrom}));
    }))));
}

// What is happening: the phase, the coin, who starts, whose turn, the scores, the result and the claim.
function statusPanel(view, names) {
  const state = view.state;
  const lines = [];
  const phase = {
    setup: "Dealing the decks.",
    choose: state.mode === "gamer" ? "Each player picks five cards and their order, in secret."
      : "Each player picks five cards of their deck, in secret.",
    coin: state.coin_winner !== null ? `${SEAT_MARKS[state.coin_winner]} ${names[state.coin_winner]} won the coin and chooses who starts.`
      : "The coin decides who starts.",
    play: state.next_player !== null ? `${SEAT_MARKS[state.next_player]} ${names[state.next_player]} places a card.` : "Play.",
    claim: "The winner may claim one of the loser's five cards.",
    over: "The game is over.",
  }[view.phase] ?? view.phase;
  lines.push(h("p", {class: "sb-phase"}, phase));
  if (view.options?.first === "coin" || state.coin_winner !== null) {
    lines.push(h("p", {class: "sb-coin"}, h("span", {class: "sb-coin-face", "aria-hidden": "true"}, "¤"),
      state.coin_winner !== null ? ` Coin: won by ${names[state.coin_winner]}` : " Coin: not shown yet"));
  }
  if (state.first !== null && state.first !== undefined) {
    lines.push(h("p", {}, `First player: ${SEAT_MARKS[state.first]} ${names[state.first]}`));
  }
  const flipped = state.board.filter((placed) => placed && ![null, placed.owner].includes(originalOwner(state, placed.card)));
  if (flipped.length) {
    lines.push(h("p", {class: "sb-flips"}, h("span", {class: "sb-legend-flip", "aria-hidden": "true"}, "↻"),
      ` ${flipped.length} card${flipped.length === 1 ? "" : "s"} flipped from ${flipped.length === 1 ? "its" : "their"} first owner`));
  }
  if (state.scores) {
    lines.push(h("p", {class: "sb-scores", "aria-label": `Score: ${names[0]} ${state.scores[0]}, ${names[1]} ${state.scores[1]}`},
      h("span", {class: "sb-score sb-owner-0"}, `${SEAT_MARKS[0]} ${names[0]} ${state.scores[0]}`), " – ",
      h("span", {class: "sb-score sb-owner-1"}, `${names[1]} ${state.scores[1]} ${SEAT_MARKS[1]}`)));
  }
  const claimed = view.result?.claimed ?? null;
  if (claimed) {
    lines.push(h("div", {class: "sb-claim"}, h("p", {}, `${names[claimed.seat]} claimed this card from ${names[claimed.from]}:`),
      triad(claimed.card, state.cards[claimed.card], {small: true, tag: "claimed"})));
  } else if (view.result && "claimed" in view.result && view.result.claimed === null) {
    lines.push(h("p", {class: "sb-claim"}, `${names[view.result.winners[0]]} declined to claim a card.`));
  }
  return h("div", {class: "sb-status"}, lines);
}

// A seat's side of the table: its hand (face up where visible, else face down, as many as it holds)
// and what it left out of its deck (or its whole deck while it picks).
function seatArea(view, seat, names, where) {
  const state = view.state;
  const deck = knownDeck(view, seat);
  const hand = state.hands?.[seat] ?? null;
  const held = state.hand_sizes?.[seat] ?? 0;
  const deckSize = state.deck_sizes?.[seat] ?? 0;
  const chosen = state.chosen?.[seat] ?? null;
  const who = `${SEAT_MARKS[seat]} ${names[seat]}`;
  const you = view.you === seat ? " (you)" : "";
  const turn = view.to_act?.includes(seat) ? h("span", {class: "sb-turn"}, "▶ to act") : null;
  const picking = view.phase === "choose" && !hand && !chosen;
  const parts = [];
  if (picking) {
    const mine = view.my_choice?.cards ?? [];
    const cards = deck ? deck.map((id) => selectable(id, state, names, mine)) : hidden(deckSize, true);
    const doing = mine.length ? "five picked, shown when both are in" : `picking five${state.mode === "gamer" ? " and their order" : ""}`;
    parts.push(zone(`Deck, ${deckSize} cards: ${doing}`, cards));
  } else {
    parts.push(zone(handCaption(view, seat, hand, held), hand
      ? hand.map((id, i) => triad(id, state.cards[id], {tag: handTag(view, seat, i)}))
      : hidden(held)));
    const out = deck && chosen ? deck.filter((id) => !chosen.includes(id)) : null;
    const outCount = out ? out.length : Math.max(0, deckSize - 5);
    if (outCount > 0) {
      parts.push(zone(`Left out of the deck (${outCount})`,
        out ? out.map((id) => triad(id, state.cards[id], {small: true})) : hidden(outCount, true), "sb-out"));
    }
  }
  return h("section", {class: ["sb-seat", where, `sb-owner-${seat}`], "data-seat": seat, "aria-label": `${names[seat]}'s side`},
    h("h3", {class: "sb-seat-name"}, who, you, " ", turn),
    h("div", {class: "sb-zones"}, parts));
}

function selectable(id, state, names, mine) {
  const at = mine.indexOf(id);
  const el = triad(id, state.cards[id], {small: true, tag: at >= 0 ? (state.mode === "gamer" ? `#${at + 1}` : "picked") : null});
  if (at >= 0) el.classList.add("selected");
  return el;
}

function handCaption(view, seat, hand, held) {
  const mode = view.state.mode;
  if (!hand) {
    return `Hand: ${held} card${held === 1 ? "" : "s"}, face down` + (mode === "advanced" ? " (order shuffled, unknown)" : "");
  }
  if (mode === "gamer" && view.phase !== "over") return `Hand in play order (${held}): the first is played next`;
  if (mode === "advanced" && view.phase !== "over") return `Hand (${held}): order shuffled, unknown to all; sorted by id`;
  return `Hand (${held})`;
}

function handTag(view, seat, i) {
  if (view.state.mode === "gamer" && view.phase !== "over") return i === 0 ? "next" : `#${i + 1}`;
  return null;
}

function zone(caption, cards, extra) {
  return h("figure", {class: ["pile", "sb-zone", extra]}, h("figcaption", {}, caption),
    h("div", {class: "cards"}, cards.length ? cards : h("span", {class: "empty"}, "none")));
}

// ---- playing on the table ----

// The pick of five: the deck's cards, in the order clicked (the play order in gamer mode). A turn: a card
// of the hand, then an empty cell, in either order (in gamer and advanced modes the cell alone: the card is
// the hand's next). The claim: one of the loser's cards. Choosing who starts, or claiming none: buttons.
export function picker(legal) {
  if (legal.choose) {
    const {type, count, from} = legal.choose;
    return choosePicker({count, from}, "card:", (cards) => ({type, cards}));
  }
  return listPicker(legal.actions, (action) => {
    if (action.type === "place") return action.card ? [`card:${action.card}`, `cell:${action.cell}`] : [`cell:${action.cell}`];
    if (action.type === "claim" && action.card) return [`card:${action.card}`];
    return null;
  });
}

export function actionLabel(action) {
  switch (action.type) {
    case "place": return `${action.card ? `Play ${action.card}` : "Play the next card"} on the ${CELLS[action.cell]} cell`;
    case "choose_first": return action.first ? "Go first" : "Go second";
    case "claim": return action.card ? `Claim ${action.card}` : "Claim no card";
    case "choose_hand": return `Pick ${action.cards.join(", ")}`;
    case "set_order": return `Pick, in this order: ${action.cards.join(", ")}`;
    default: return null;
  }
}

// ---- the log ----

const RULE_WORDS = {capture: "capture", elemental: "the elemental rule", add: "the add rule"};

export function sentence(event, ctx) {
  const data = event.data || {};
  const name = (seat) => ctx.names[seat] ?? `seat ${seat}`;
  const cards = data.cards || {};
  switch (event.type) {
    case "decks_dealt": {
      const [a, b] = data.deck_sizes || [];
      const first = data.first === "coin" ? "a coin will decide who starts" : `${name(data.first)} starts`;
      return `The decks were dealt (${name(0)} ${a} cards, ${name(1)} ${b}); ${first}.`;
    }
    case "hands_chosen":
      if (data.hands) {
        return `The hands were shown: ${[0, 1].map((s) => `${name(s)} holds ${data.hands[s].map((id) => shortName(id, cards[id])).join(", ")}`).join("; ")}.`;
      }
      return `Both hands were chosen in secret${ctx.view?.state?.mode === "advanced" ? " and shuffled into an order nobody knows" : ", each with its order of play"}.`;
    case "coin_flipped":
      return `${name(data.winner)} won the coin toss and chooses who starts.`;
    case "first_chosen":
      return `${name(data.first_player ?? data.seat)} starts.`;
    case "card_placed":
      return `${name(data.seat)} placed ${fullName(data.card, data.card_def)} on the ${CELLS[data.cell]} cell.`;
    case "cards_flipped": {
      const n = data.cells.length;
      return `${name(data.seat)} flipped ${n} card${n === 1 ? "" : "s"} (${data.cells.map((c) => CELLS[c]).join(", ")}) by ${RULE_WORDS[data.rule] ?? data.rule}.`;
    }
    case "card_claimed":
      return `${name(data.seat)} claimed ${data.card} from ${name(data.from)}.`;
    case "claim_declined":
      return `${name(data.seat)} declined to claim a card from ${name(data.from)}.`;
    case "action_taken":
      return actionSentence(data, name);
    case "game_ended": {
      const result = data.result;
      if (!result?.scores) return null;
      const score = `${name(0)} ${result.scores[0]}, ${name(1)} ${result.scores[1]}`;
      return result.winners.length === 1 ? `The game ended ${score}: ${name(result.winners[0])} won.` : `The game ended ${score}: a draw.`;
    }
    default:
      return null;
  }
}

function actionSentence(data, name) {
  const action = data.action || {};
  const by = data.by === "timeout" ? " (out of time: played for them)" : "";
  switch (action.type) {
    case "place":
      return `${name(data.seat)} plays ${action.card ? `${action.card} ` : "their next card "}on the ${CELLS[action.cell]} cell${by}.`;
    case "choose_first":
      return `${name(data.seat)} decides to go ${action.first ? "first" : "second"}${by}.`;
    case "claim":
      return action.card ? `${name(data.seat)} claims ${action.card}${by}.` : `${name(data.seat)} takes no card${by}.`;
    default:
      return null;
  }
}
