// Front Line's table (docs/rules/front-line.md): each player's camp (front line, reinforcements, draw pile,
// captured cards), the set-aside cards, and the latest turn's attacks as they resolved, each with its sum
// against the target's defence. Draw piles and set-aside cards are face down, as many as the view counts,
// until the game is over and the view lists them.
import {h} from "../lib/h.js";
import {card, pile} from "../lib/cards.js";
import {buttonsOnly, choosePicker} from "../lib/picks.js";

const SUITS = {
  rock: {name: "Rock", symbol: "●"},
  paper: {name: "Paper", symbol: "▤"},
  scissors: {name: "Scissors", symbol: "✂"},
  lizard: {name: "Lizard", symbol: "∾"},
  water: {name: "Water", symbol: "≈"},
};
const RANKS = {a: "Ace", j: "Jack", q: "Queen", k: "King"};
const ATTACK = {a: 14, j: 11, q: 12, k: 13};
const DEFENCE = {a: 1, j: 11, q: 12, k: 13};

let styled = false;

// The game's own style sheet, added to the page once.
function loadStyles() {
  if (styled || document.querySelector('link[data-game-css="front-line"]')) return;
  styled = true;
  document.head.append(h("link", {rel: "stylesheet", href: "/app/games/front-line.css", "data-game-css": "front-line"}));
}

// "s1:rock-a" -> {owner: 1, suit: "rock", rank: "a", joker: false}; "joker-water" -> {suit: "water", joker: true}.
export function parse(id) {
  const match = /^s(\d+):(.*)$/.exec(id);
  const bare = match ? match[2] : id;
  const owner = match ? Number(match[1]) : null;
  if (bare.startsWith("joker-")) return {owner, suit: bare.slice(6), rank: null, joker: true};
  const cut = bare.lastIndexOf("-");
  return {owner, suit: bare.slice(0, cut), rank: bare.slice(cut + 1), joker: false};
}

// A card's name in words: "Rock Ace", "Paper 7", "Water Joker".
export function cardName(id) {
  const {suit, rank, joker} = parse(id);
  const suitName = SUITS[suit]?.name ?? suit;
  return joker ? `${suitName} Joker` : `${suitName} ${RANKS[rank] ?? rank}`;
}

function attackValue(id) {
  const {rank, joker} = parse(id);
  return joker ? 0 : ATTACK[rank] ?? Number(rank);
}

function defenceValue(id) {
  const {rank, joker} = parse(id);
  return joker ? 0 : DEFENCE[rank] ?? Number(rank);
}

function drawCard(id, ctx, {small = false, marks = []} = {}) {
  const {owner, suit, rank, joker} = parse(id);
  const symbol = SUITS[suit]?.symbol ?? "?";
  const details = [];
  if (!joker && rank === "a") details.push("14 atk, 1 def");
  if (owner !== null) details.push(`${ctx.names[owner] ?? `seat ${owner}`}'s deck`);
  const el = card({
    id, label: cardName(id), suit: joker ? "joker" : suit, small,
    value: joker ? "★" : (rank ?? "").toUpperCase(), symbol,
    detail: details.join(" · ") || null,
  });
  el.classList.add("fl-card", ...marks);
  return el;
}

// A face-down stack: `count` backs (as many as the view says), or the cards themselves once the view lists them.
function stack(caption, count, ids, ctx) {
  const shown = ids ? ids.map((id) => drawCard(id, ctx, {small: true})) : Array.from({length: count}, () => card({hidden: true, small: true}));
  const text = ids ? `${caption} · ${ids.length}, face up now the game is over` : `${caption} · ${count} face down`;
  return h("figure", {class: ["pile", "fl-stack", ids && "fl-open"]}, h("figcaption", {}, text),
    h("div", {class: "cards"}, shown.length ? shown : h("span", {class: "empty"}, "empty")));
}

function tag(text, kind) {
  return h("span", {class: ["fl-tag", kind && `fl-tag-${kind}`]}, text);
}

// One player's side of the table.
function camp(seat, state, view, ctx) {
  const last = state.last_turn;
  const attacking = new Set(last && !last.passed && last.seat === seat ? last.attacks.flatMap((a) => a.cards) : []);
  const taken = new Set(last && !last.passed && last.seat === seat ? last.attacks.map((a) => a.target) : []);
  const refill = state.refill && state.refill.seat === seat ? state.refill : null;
  const movable = new Set(refill ? refill.from : []);
  const out = state.out.includes(seat);
  const toAct = view.to_act.includes(seat);
  const marks = (id) => [attacking.has(id) && "fl-attacker", movable.has(id) && "fl-movable"].filter(Boolean);
  // What may be clicked: one's own cards (an attack's, a refill's), the opposing front lines' (an attack's targets).
  const mine = ctx.as === seat;
  const pickable = (el, token) => { el.dataset.pick = token; return el; };
  const front = state.front[seat].map((id) => pickable(drawCard(id, ctx, {marks: marks(id)}), mine ? `card:${id}` : `target:${id}`));
  const reserve = state.reinforcements[seat].map((id) => {
    const el = drawCard(id, ctx, {marks: marks(id)});
    return mine ? pickable(el, `card:${id}`) : el;
  });
  const captured = state.captured[seat].map((id) => drawCard(id, ctx, {small: true, marks: taken.has(id) ? ["fl-taken"] : []}));
  const name = ctx.names[seat] ?? `seat ${seat}`;
  return h("section", {class: ["fl-camp", toAct && "fl-to-act", out && "fl-out", ctx.as === seat && "fl-mine"],
    "data-seat": seat, "aria-label": `${name}'s side`},
    h("header", {class: "fl-camp-head"},
      h("span", {class: "fl-name"}, name, ctx.as === seat ? " (you)" : ""),
      h("span", {class: "fl-score", title: "captured cards"}, `⚑ ${state.scores[seat]} captured`),
      state.turn === seat && !refill ? tag("▶ attacking", "turn") : null,
      refill ? tag(`↑ moving ${refill.count} up`, "turn") : null,
      !refill && state.refills_pending.includes(seat) ? tag("↻ refill due", null) : null,
      out ? tag("✕ out", "out") : null,
      view.result ? tag(`rank ${view.result.ranks[seat]}`, view.result.winners.includes(seat) ? "win" : null) : null),
    h("div", {class: "fl-zones"},
      h("div", {class: "fl-front"}, pile("Front line", front, {empty: "no cards"})),
      h("div", {class: "fl-reserve"}, pile("Reinforcements", reserve, {empty: "none left"})),
      stack("Draw pile", state.draw_sizes[seat], state.draw_piles?.[seat], ctx),
      h("figure", {class: "pile fl-captured"}, h("figcaption", {}, `Captured · ${state.captured[seat].length}`),
        h("div", {class: "cards"}, captured.length ? captured : h("span", {class: "empty"}, "none yet")))));
}

// The latest turn: each attack with its cards, their sum, and the target it captured.
function battle(state, ctx) {
  const last = state.last_turn;
  if (!last) {
    return h("section", {class: "fl-battle", "aria-label": "The latest turn"},
      h("h3", {}, "No attack yet"), h("p", {class: "fl-hint"}, `${ctx.names[state.turn ?? 0] ?? "seat 0"} attacks first.`));
  }
  const who = ctx.names[last.seat] ?? `seat ${last.seat}`;
  if (last.passed) {
    return h("section", {class: "fl-battle", "aria-label": "The latest turn"},
      h("h3", {}, `${who} passed`), h("p", {class: "fl-hint"}, `${state.passes} pass${state.passes === 1 ? "" : "es"} in a row`));
  }
  return h("section", {class: "fl-battle", "aria-label": "The latest turn"},
    h("h3", {}, `${who} attacked ${last.attacks.length === 1 ? "once" : `${last.attacks.length} times`}`),
    h("ol", {class: "fl-attacks"}, last.attacks.map((attack) => {
      const sum = attack.cards.reduce((total, id) => total + attackValue(id), 0);
      const victim = ctx.names[attack.owner] ?? `seat ${attack.owner}`;
      return h("li", {class: ["fl-attack", attack.joker && "fl-joker-attack"]},
        h("div", {class: "cards fl-team"}, attack.cards.map((id) => drawCard(id, ctx, {small: true}))),
        h("div", {class: "fl-versus"},
          h("span", {}, h("span", {class: "fl-sum"}, `⚔ ${attack.cards.map(attackValue).join(" + ")} = ${sum}`),
            ` beats defence ${defenceValue(attack.target)}`),
          attack.joker ? h("span", {class: "fl-tag fl-tag-joker"}, "★ joker: suits reversed") : null),
        h("div", {class: "fl-outcome"},
          h("span", {class: "fl-arrow", "aria-hidden": "true"}, "→"),
          h("div", {class: "cards fl-target"}, drawCard(attack.target, ctx, {small: true, marks: ["fl-taken"]})),
          h("span", {class: "fl-result"}, `✓ captured from ${victim}`)));
    })));
}

function statusLine(state, view, ctx) {
  const name = (seat) => ctx.names[seat] ?? `seat ${seat}`;
  let text;
  if (view.phase === "over" || view.result) {
    const reason = view.result?.reason === "elimination" ? "only one player was left in" : "every player still in passed";
    text = `Ended after ${state.turns} turns: ${reason}.`;
  } else if (state.refill) {
    text = `${name(state.refill.seat)} must move ${state.refill.count} of ${state.refill.from.length} reinforcements up to the front line.`;
  } else if (state.turn !== null) {
    text = `Turn ${state.turns + 1}: ${name(state.turn)} attacks or passes.`;
  } else {
    text = "The cards are being dealt.";
  }
  const aside = stack("Set aside", state.set_aside, state.set_aside_cards, ctx);
  return h("div", {class: "fl-status"},
    h("p", {class: "fl-phase"}, text),
    h("p", {class: "fl-options"}, `${state.deck === "per-player" ? "a deck per player" : "one shared deck"}, ${state.jokers ? "with jokers ★" : "no jokers"}`),
    state.set_aside || state.set_aside_cards?.length ? aside : null);
}

// The seats in the order drawn: the others first, the viewer's own (or seat 0's) last, nearest to them.
function order(n, me) {
  const seats = Array.from({length: n}, (_, i) => (me + 1 + i) % n);
  return seats;
}

export function drawTable(view, ctx) {
  loadStyles();
  const state = view.state;
  const me = ctx.as ?? 0;
  const seats = order(state.front.length, me);
  const camps = seats.map((seat) => camp(seat, state, view, ctx));
  return h("div", {class: "fl-table", "data-phase": view.phase},
    statusLine(state, view, ctx),
    h("div", {class: "fl-field"}, camps.slice(0, -1), battle(state, ctx), camps.at(-1)),
    h("p", {class: "fl-legend"}, Object.values(SUITS).map((s) => h("span", {}, `${s.symbol} ${s.name}`)),
      h("span", {}, "★ Joker"), h("span", {}, "Ace attacks 14, defends 1")));
}

function list(ids) {
  const names = ids.map(cardName);
  return names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

// ---------------------------------------------------------------- playing on the table

// The refill: `count` of one's reinforcements, clicked. An attack declaration (openapi.yaml,
// FrontLineAttackSpace): a click on an opposing front-line card starts an attack on it; clicks on one's own
// cards join it (the first, its initiator, from the front line); once it is enough, a click on another target
// starts the next. The declaration is complete when every attack started is enough: it is offered to confirm
// while more may be added, and sent at once when nothing more can be. Pass: a button.
export function picker(legal) {
  const buttons = legal.actions.filter((action) => action.type === "pass");
  if (legal.refill) return choosePicker(legal.refill, "card:", (cards) => ({type: "refill", cards}));
  if (!legal.attack) return buttonsOnly(buttons);
  return attackPicker(legal.attack, buttons);
}

export function attackPicker(space, buttons = []) {
  const cards = space.cards;
  const targets = new Map(space.targets.map((t) => [t.target, t]));
  const ids = Object.keys(cards);
  const total = (group) => group.reduce((sum, id) => sum + cards[id].attack, 0);
  // Rule 2's two ways, for a group as it stands: "normal" (no joker, every card in t.normal), "joker" (at most
  // one joker, of t.jokers, every other card in t.reversed: the joker may still come).
  const normal = (t, group) => group.every((id) => !cards[id].joker && t.normal.includes(id));
  const jokered = (t, group) => {
    const jokers = group.filter((id) => cards[id].joker);
    return jokers.length <= 1 && jokers.every((id) => t.jokers.includes(id))
      && group.every((id) => cards[id].joker || t.reversed.includes(id));
  };
  // Whether the group (its initiator in the front zone) can still grow into an attack that captures t,
  // with the cards that no other attack of the declaration uses.
  const canFinish = (t, group, used) => {
    if (!group.length || cards[group[0]]?.zone !== "front") return false;
    const free = (id) => !used.has(id) && !group.includes(id);
    let best = -1;
    if (normal(t, group)) best = total(group) + total(t.normal.filter((id) => free(id) && !cards[id].joker));
    if (jokered(t, group)) {
      const hasJoker = group.some((id) => cards[id].joker);
      const spare = t.jokers.filter(free);
      if (hasJoker || spare.length) {
        const joker = hasJoker ? 0 : Math.max(...spare.map((id) => cards[id].attack));
        best = Math.max(best, total(group) + joker + total(t.reversed.filter((id) => free(id) && !cards[id].joker)));
      }
    }
    return best > t.defence;
  };
  // Rules 2-4: the group captures t as it is.
  const enough = (t, group) => group.length > 0 && cards[group[0]].zone === "front" && total(group) > t.defence
    && (normal(t, group) || (jokered(t, group) && group.filter((id) => cards[id].joker).length === 1));
  return {
    buttons,
    next(selection) {
      const attacks = [];
      for (const token of selection) {
        if (token.startsWith("target:")) attacks.push({target: token.slice(7), cards: []});
        else if (attacks.length) attacks.at(-1).cards.push(token.slice(5));
      }
      const options = new Set();
      const inUse = new Set(attacks.flatMap((a) => a.cards));
      const current = attacks.at(-1);
      if (current) {
        const others = new Set(attacks.slice(0, -1).flatMap((a) => a.cards));
        const t = targets.get(current.target);
        for (const id of ids) {
          if (!inUse.has(id) && canFinish(t, [...current.cards, id], others)) options.add(`card:${id}`);
        }
      }
      if (!current || enough(targets.get(current.target), current.cards)) {
        const targeted = new Set(attacks.map((a) => a.target));
        for (const t of targets.values()) {
          if (!targeted.has(t.target) && ids.some((id) => !inUse.has(id) && canFinish(t, [id], inUse))) options.add(`target:${t.target}`);
        }
      }
      const done = attacks.length > 0 && attacks.every((a) => enough(targets.get(a.target), a.cards));
      return {options, complete: done ? [{type: "attack", attacks: attacks.map((a) => ({target: a.target, cards: a.cards}))}] : []};
    },
  };
}

// A chosen card's badge: the number of the attack it joins (its target reads ⚔ and the same number).
export function pickOrder(token, selection) {
  const upTo = selection.slice(0, selection.indexOf(token) + 1);
  return String(upTo.filter((t) => t.startsWith("target:")).length);
}

export function actionLabel(action) {
  switch (action.type) {
    case "pass": return "Pass";
    case "refill": return `Move up ${list(action.cards)}`;
    case "attack": return `Attack ${action.attacks.map((a) => `${cardName(a.target)} with ${list(a.cards)}`).join("; ")}`;
    default: return null;
  }
}

export function sentence(event, ctx) {
  const data = event.data || {};
  const name = (seat) => ctx.names[seat] ?? `seat ${seat}`;
  const by = data.by === "timeout" ? " (the clock ran out; the service chose)" : "";
  switch (event.type) {
    case "cards_dealt": {
      const draws = data.draw_sizes.join(", ");
      const aside = data.set_aside ? `; ${data.set_aside} set aside face down` : "";
      return `The cards were dealt: a front line and reinforcements face up for each player, draw piles of ${draws}${aside}.`;
    }
    case "action_taken": {
      const action = data.action || {};
      if (action.type === "pass") return `${name(data.seat)} passed${by}.`;
      if (action.type === "refill") return `${name(data.seat)} chose to move up ${list(action.cards)}${by}.`;
      if (action.type === "attack") {
        const parts = action.attacks.map((a) => `${cardName(a.target)} with ${list(a.cards)}`);
        return `${name(data.seat)} declared ${parts.length === 1 ? "an attack" : `${parts.length} attacks`}: ${parts.join("; ")}${by}.`;
      }
      return null;
    }
    case "attacked": {
      const parts = data.attacks.map((a) => {
        const sum = a.cards.reduce((total, id) => total + attackValue(id), 0);
        const joker = a.joker ? ", a joker attack" : "";
        return `${list(a.cards)} (${sum}) took ${name(a.owner)}'s ${cardName(a.target)} (${defenceValue(a.target)})${joker}`;
      });
      return `${name(data.seat)} captured ${data.attacks.length === 1 ? "1 card" : `${data.attacks.length} cards`}: ${parts.join("; ")}.`;
    }
    case "passed":
      return `${name(data.seat)} passed (${data.passes} in a row).`;
    case "front_refilled": {
      const moved = data.moved.length ? `moved ${list(data.moved)} up to the front line` : "moved nothing up";
      const drawn = data.drawn.length ? `drew ${list(data.drawn)}` : "drew nothing";
      const out = data.out ? `, and is out` : `; ${data.draw_size} left in the draw pile`;
      return `${name(data.seat)} ${moved}${data.chosen ? " (chosen)" : ""} and ${drawn}${out}.`;
    }
    default:
      return null;
  }
}
