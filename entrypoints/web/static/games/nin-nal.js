// nin-nal: Nin Nal's table (docs/rules/nin-nal.md, "View"): the three piles in the middle, this round's
// revealed cards in resolution order (who took or placed what), every seat's hand (face down where the
// viewer may not see it), won cards and score, the unused cards, the tie-break's throws and the result.
import {h} from "../lib/h.js";
import {card, pile} from "../lib/cards.js";
import {listPicker} from "../lib/picks.js";

const STYLE = "/app/games/nin-nal.css";
const HAND = 9; // cards dealt to each seat
const DECK = 48; // three colours x 16 values
// A colour's symbol (DejaVu has these; no emoji font is needed) and label: never the colour alone.
const COLOURS = {
  rock: {symbol: "●", label: "Rock"},
  paper: {symbol: "▤", label: "Paper"},
  scissors: {symbol: "✂", label: "Scissors"},
};
const PHASES = {select: "Choose a card", resolve: "Resolving", tie_break: "Tie-break", over: "Game over", deal: "Dealing"};

function loadStyle() {
  if (document.querySelector(`link[href="${STYLE}"]`)) return;
  document.head.append(h("link", {rel: "stylesheet", href: STYLE}));
}

// "paper--4" -> {colour: "paper", value: -4}: split at the first hyphen.
function parse(id) {
  const cut = id.indexOf("-");
  return {colour: id.slice(0, cut), value: Number(id.slice(cut + 1))};
}

function signed(value) {
  return value < 0 ? `−${-value}` : String(value);
}

// "Rock −4": how the card is named in the table and in sentences.
export function cardName(id) {
  const {colour, value} = parse(id);
  return `${COLOURS[colour]?.label ?? colour} ${signed(value)}`;
}

function face(id, extra = {}) {
  const {colour, value} = parse(id);
  const worth = value < 0 ? "costs points" : "scores points";
  return card({id, label: cardName(id), value: signed(value), symbol: COLOURS[colour]?.symbol, suit: colour,
    detail: extra.detail ?? worth, small: extra.small, selected: extra.selected});
}

function hidden(count, small = true) {
  return Array.from({length: count}, () => card({hidden: true, small}));
}

function total(ids) {
  return ids.reduce((sum, id) => sum + parse(id).value, 0);
}

export function drawTable(view, ctx) {
  loadStyle();
  const state = view.state;
  const n = view.seats.length;
  if (!state.piles.length) { // step 1, before the deal: the whole deck, face down
    return h("div", {class: "nin-nal"}, banner(view),
      h("section", {class: "nn-unused"}, pile(`The deck (${DECK} cards), about to be dealt`, hidden(DECK))));
  }
  return h("div", {class: "nin-nal"},
    banner(view),
    middle(view, ctx),
    roundCards(view, ctx),
    state.tie_break ? tieBreak(state.tie_break, view, ctx) : null,
    h("div", {class: "nn-seats"}, view.seats.map((seat) => seatPanel(view, ctx, seat.seat))),
    unused(state, n));
}

function banner(view) {
  const state = view.state;
  const round = view.phase === "tie_break" || view.phase === "over" ? `After ${state.rounds} rounds`
    : state.round ? `Round ${state.round} of ${state.rounds}` : `${state.rounds} rounds to play`;
  return h("div", {class: "nn-banner"},
    h("span", {class: "nn-round"}, round),
    h("span", {class: "nn-phase"}, PHASES[view.phase] ?? view.phase),
    h("span", {class: "nn-legend", "aria-label": "Rock beats scissors, scissors beat paper, paper beats rock"},
      "● Rock beats ✂ Scissors · ✂ Scissors beat ▤ Paper · ▤ Paper beats ● Rock"));
}

// The three piles, bottom to top, the top card last and lifted; a pile the resolving card may take says so.
function middle(view, ctx) {
  const state = view.state;
  const resolving = state.resolving;
  return h("section", {class: "nn-middle", "aria-label": "The three piles"},
    state.piles.map((cards, index) => {
      const takeable = resolving?.can_take?.includes(index);
      const worth = total(cards);
      return h("figure", {class: ["nn-pile", takeable && "takeable"], "data-pile": index, "data-pick": `pile:${index}`,
        "aria-label": `Pile ${index}: ${cards.length} ${cards.length === 1 ? "card" : "cards"}, worth ${signed(worth)}`},
        h("figcaption", {},
          h("strong", {}, `Pile ${index}`),
          ` · ${cards.length} ${cards.length === 1 ? "card" : "cards"} · worth ${signed(worth)}`,
          takeable ? h("span", {class: "nn-flag"}, `⚑ ${ctx.names[resolving.seat]} may take it`) : null),
        h("div", {class: "nn-stack"}, cards.map((id, i) => face(id, {small: i < cards.length - 1,
          detail: i === cards.length - 1 ? "top card" : null}))));
    }));
}

// This round's cards in resolution order (or the last round's, between rounds), each with what it did.
function roundCards(view, ctx) {
  const state = view.state;
  const current = state.revealed.length > 0;
  const entries = current ? state.revealed : state.previous_round;
  if (!entries.length) return null;
  const caption = current ? `Round ${state.round}: the cards revealed, in resolution order`
    : `Last round's cards, in the order they resolved`;
  return h("section", {class: ["nn-revealed", !current && "previous"], "aria-label": caption},
    h("h3", {}, caption),
    h("ol", {}, entries.map((entry) => {
      const now = state.resolving && state.resolving.seat === entry.seat && state.resolving.card === entry.card;
      return h("li", {class: ["nn-entry", now && "now", entry.resolved && "done"]},
        face(entry.card, {small: true, selected: now, detail: ""}),
        h("span", {class: "nn-what"}, h("strong", {}, ctx.names[entry.seat]), " ", outcome(entry, now, state)));
    })));
}

function outcome(entry, now, state) {
  if (entry.move === "take") {
    const taken = entry.taken || [];
    return `took pile ${entry.pile}: ${taken.length} ${taken.length === 1 ? "card" : "cards"}, ${signed(total(taken))} points`;
  }
  if (entry.move === "place") return `placed it on pile ${entry.pile}`;
  if (now) {
    const can = state.resolving.can_take || [];
    return can.length ? `resolves now: must take pile ${can.join(" or ")}` : "resolves now: beats no top card, must place it";
  }
  return "waits its turn";
}

// A seat: name, score, its hand (face up if the viewer may see it, else face down, as many as it holds)
// and the cards it has won.
function seatPanel(view, ctx, seat) {
  const state = view.state;
  const mine = ctx.as === seat || view.you === seat;
  const hand = state.hands ? state.hands[seat] : mine && state.hand ? state.hand : null;
  const size = state.hand_sizes[seat];
  const chosen = view.committed.includes(seat);
  const pick = mine && view.my_choice?.type === "select" ? view.my_choice.card : null;
  const acting = view.to_act.includes(seat) || state.resolving?.seat === seat;
  const won = state.won[seat] || [];
  const rank = view.result?.ranks?.[seat];
  const handCards = hand ? hand.map((id) => {
    const el = face(id, {small: true, selected: id === pick, detail: id === pick ? "chosen" : ""});
    if (mine) el.dataset.pick = `card:${id}`; // the viewer's own hand: a card to select
    return el;
  }) : hidden(size);
  return h("section", {class: ["nn-seat", acting && "acting", rank === 1 && "winner"], "data-seat": seat,
    "aria-label": `${ctx.names[seat]}: ${state.scores[seat]} points`},
    h("header", {},
      h("span", {class: "nn-name"}, rank === 1 ? "★ " : "", ctx.names[seat], mine ? " (you)" : ""),
      h("span", {class: "nn-score", title: "points: the sum of the cards won"}, `${signed(state.scores[seat])} pts`),
      rank ? h("span", {class: "nn-rank"}, `rank ${rank}`) : null,
      chosen ? h("span", {class: "nn-chosen"}, "✓ card chosen") : null),
    pile(hand ? `Hand (${size})` : `Hand (${size}, face down)`, handCards, {empty: "no cards left"}),
    pile(`Won (${won.length}): ${signed(total(won))} points`, won.map((id) => face(id, {small: true, detail: ""})),
      {empty: "nothing won yet"}));
}

// The cards nobody plays with: face down while the game runs, face up once it is over.
function unused(state, n) {
  const cards = state.unused ? state.unused.map((id) => face(id, {small: true, detail: ""}))
    : hidden(DECK - 3 - HAND * n);
  return h("section", {class: "nn-unused"},
    pile(`Unused cards (${cards.length})${state.unused ? "" : ", out of the game"}`, cards));
}

const SIGNS = {rock: "● rock", paper: "▤ paper", scissors: "✂ scissors"};

// The tie for first: who tied, each throw's signs, who dropped out, who is still in.
function tieBreak(tie, view, ctx) {
  const names = (seats) => seats.map((s) => ctx.names[s]).join(", ") || "nobody";
  let still = tie.seats;
  return h("section", {class: "nn-tie", "aria-label": "Tie-break"},
    h("h3", {}, `Tie for first: ${names(tie.seats)}`),
    h("p", {}, `Rock, paper, scissors until one is left; ${tie.tied_throws} of ${tie.max_tied_throws} tied throws used.`),
    tie.throws.length ? h("ol", {class: "nn-throws"}, tie.throws.map((signs, index) => {
      const before = still;
      const colours = new Set(signs.map((t) => t.sign));
      still = tie.throws[index + 1] ? tie.throws[index + 1].map((t) => t.seat) : tie.remaining;
      const out = before.filter((s) => !still.includes(s));
      return h("li", {},
        h("span", {class: "nn-throw-no"}, `Throw ${index + 1}`),
        signs.map((t) => h("span", {class: ["nn-sign", `sign-${t.sign}`], "data-sign": t.sign},
          `${ctx.names[t.seat]}: ${SIGNS[t.sign] ?? t.sign}`)),
        h("span", {class: "nn-verdict"}, colours.size === 2 ? `${names(out)} out` : "tied: throw again"));
    })) : h("p", {class: "empty"}, "No throw yet."),
    h("p", {}, view.phase === "over" ? `Still in at the end: ${names(tie.remaining)}` : `Still in: ${names(tie.remaining)}`),
    throwChoice(view));
}

// The viewer's throw, while it is due: the three signs to click.
function throwChoice(view) {
  if (view.phase !== "tie_break" || view.you === null || view.you === undefined || !view.to_act.includes(view.you)) return null;
  return h("div", {class: "nn-throw-choice", "aria-label": "Your throw"},
    h("span", {class: "nn-throw-no"}, "Your throw:"),
    Object.entries(SIGNS).map(([sign, text]) => h("span", {class: ["nn-sign", "nn-sign-pick", `sign-${sign}`],
      "data-pick": `sign:${sign}`, role: "img", "aria-label": `throw ${sign}`}, text)));
}

// ---------------------------------------------------------------- playing on the table

// A card of the hand (select, in secret), a pile (take or place), a sign (the tie-break's throw): one click each.
export function picker(legal) {
  return listPicker(legal.actions, (action) => {
    if (action.type === "select") return [`card:${action.card}`];
    if (action.type === "take" || action.type === "place") return [`pile:${action.pile}`];
    if (action.type === "throw") return [`sign:${action.sign}`];
    return null;
  });
}

export function actionLabel(action) {
  switch (action.type) {
    case "select": return `Choose ${cardName(action.card)}`;
    case "take": return `Take pile ${action.pile}`;
    case "place": return `Place the card on pile ${action.pile}`;
    case "throw": return `Throw ${action.sign}`;
    default: return null;
  }
}

// ---------------------------------------------------------------- the log's sentences

export function sentence(event, ctx) {
  const data = event.data || {};
  const name = (seat) => ctx.names[seat] ?? `seat ${seat}`;
  switch (event.type) {
    case "cards_dealt": {
      const own = ctx.as !== null && data.private?.[ctx.as]?.hand;
      const hand = own ? ` Your hand: ${own.map(cardName).join(", ")}.` : "";
      return `The piles were laid out: ${data.piles.map(cardName).join(", ")}; everyone got ${HAND} cards.${hand}`;
    }
    case "cards_revealed":
      return `Round ${data.round}'s cards were revealed: ${data.order.map((o) => `${name(o.seat)} ${cardName(o.card)}`).join(", ")}.`;
    case "pile_taken":
      return `${name(data.seat)}'s ${cardName(data.card)} took pile ${data.pile} (${data.cards.map(cardName).join(", ")}): `
        + `${signed(total(data.cards))} points.`;
    case "card_placed":
      return `${name(data.seat)} placed ${cardName(data.card)} on pile ${data.pile}.`;
    case "signs_thrown": {
      const signs = data.throws.map((t) => `${name(t.seat)} ${t.sign}`).join(", ");
      const verdict = data.dropped.length ? `${data.dropped.map(name).join(", ")} dropped out` : "a tied throw, nobody dropped out";
      return `Tie-break throw ${data.throw}: ${signs}; ${verdict}.`;
    }
    case "action_taken": {
      const action = data.action || {};
      const by = data.by === "timeout" ? " (played by the timeout)" : "";
      if (action.type === "take") return `${name(data.seat)} takes pile ${action.pile}${by}.`;
      if (action.type === "place") return `${name(data.seat)} places the card on pile ${action.pile}${by}.`;
      if (action.type === "resign") return `${name(data.seat)} resigned${by}.`;
      return null;
    }
    case "game_ended": {
      const scores = data.result?.scores;
      return scores ? `The game ended: ${scores.map((s, i) => `${name(i)} ${signed(s)}`).join(", ")}.` : null;
    }
    default:
      return null;
  }
}
