// San, Ni, Ichi!: the table drawn from the game's view (docs/rules/san-ni-ichi.md, "View").
//
// Top: the round, its phase and the card resolving now; then this round's revealed cards in the order
// they resolve (each with what it did), then one mat per seat: its combat pile (bottom to top, the top
// card and the element it counts as), its damage pile with its total, its hand (face up when the viewer
// may see it, else face down, as many as the view says), and its marks (team, Block, sitting out,
// deciding on a smoke bomb, rank at the end). Below: the weapons in play and out, and the discard pile.
// Every element and weapon has a symbol and a name besides its colour.
import {card, pile} from "../lib/cards.js";
import {h} from "../lib/h.js";
import {listPicker} from "../lib/picks.js";

const STYLE = "/app/games/san-ni-ichi.css";

export const ELEMENTS = {
  fire: {symbol: "▲", name: "Fire"},
  water: {symbol: "≈", name: "Water"},
  wood: {symbol: "♣", name: "Wood"},
};

export const WEAPONS = {
  "block": {symbol: "▣", name: "Block", does: "protects a seat this round"},
  "tonfa": {symbol: "⊥", name: "Tonfa", does: "takes a pile's top card"},
  "sai": {symbol: "ψ", name: "Sai", does: "swaps two piles"},
  "yoso-kogeki": {symbol: "✦", name: "Yoso Kogeki", does: "attack of any element"},
  "torinoko": {symbol: "☁", name: "Torinoko", does: "smoke bomb: dodges damage"},
  "shuriken": {symbol: "✶", name: "Shuriken", does: "straight into a damage pile"},
};

const PHASES = {
  select: "Select: everyone picks a card in secret",
  attack: "Attack: the cards resolve, weakest first",
  smoke: "Damage: smoke bombs are decided in secret",
  over: "Game over",
  deal: "Dealing",
};

function loadStyle() {
  if (document.querySelector(`link[href="${STYLE}"]`)) return;
  document.head.append(h("link", {rel: "stylesheet", href: STYLE}));
}

// "fire-7" -> {kind: "fire", strength: 7}; "yoso-kogeki-17" -> {kind: "yoso-kogeki", strength: 17}.
export function parse(id) {
  const cut = id.lastIndexOf("-");
  return {kind: id.slice(0, cut), strength: Number(id.slice(cut + 1))};
}

// A card's name for people: "Fire 7", "Yoso Kogeki 17".
export function cardName(id) {
  const {kind, strength} = parse(id);
  return `${(ELEMENTS[kind] || WEAPONS[kind] || {name: kind}).name} ${strength}`;
}

function letterOf(id) {
  const {kind, strength} = parse(id);
  if (!ELEMENTS[kind]) return null;
  const order = ["fire", "water", "wood"];
  const shift = (strength - 1) % 3;
  const rotated = [...order.slice(shift), ...order.slice(0, shift)];
  return "abc"[rotated.indexOf(kind)];
}

// One card, face up. `element`: the element a Yoso Kogeki counts as in its pile (null: none).
function sniCard(id, {small, element, selected, note} = {}) {
  const {kind, strength} = parse(id);
  const el = ELEMENTS[kind];
  const weapon = WEAPONS[kind];
  const letter = letterOf(id);
  let detail = el ? `letter ${letter}` : null;
  let label = cardName(id);
  if (kind === "yoso-kogeki" && element !== undefined) {
    detail = element ? `as ${ELEMENTS[element].symbol} ${ELEMENTS[element].name}` : "no element";
    label += element ? `, counting as ${ELEMENTS[element].name}` : ", no element";
  }
  if (note) label += `, ${note}`;
  const shown = card({id, label, value: strength, symbol: el ? el.symbol : weapon ? weapon.symbol : "",
    suit: el ? kind : `sni-${kind}`, detail, small, selected});
  shown.querySelector(".name").textContent = el ? el.name : weapon ? weapon.name : kind;
  shown.classList.add("sni-card", weapon ? "sni-weapon" : "sni-attack");
  return shown;
}

function hiddenCards(n, small = true) {
  return Array.from({length: n}, () => card({hidden: true, small}));
}

export function drawTable(view, ctx) {
  loadStyle();
  const state = view.state;
  const name = (seat) => ctx.names[seat] ?? `seat ${seat}`;
  return h("div", {class: "sni"},
    roundBar(view, state, name),
    resolution(state, name),
    h("div", {class: "sni-seats"}, state.hand_sizes.map((_, seat) => seatMat(view, state, ctx, seat, name))),
    lastDamage(state, name),
    h("div", {class: "sni-bottom"}, weaponsPanel(state), discardPanel(state)));
}

function roundBar(view, state, name) {
  const resolving = state.resolving;
  return h("div", {class: "sni-round"},
    h("span", {class: "sni-round-no"}, state.round ? `Round ${state.round}` : "Setting up"),
    h("span", {class: "sni-phase", "data-phase": state.phase}, PHASES[state.phase] || state.phase),
    resolving ? h("span", {class: "sni-resolving", "data-resolving": resolving.card},
      `▶ Now: ${name(resolving.seat)}'s ${cardName(resolving.card)}`) : null,
    h("span", {class: "sni-rules"},
      `${state.players} players · cards 1–${state.strengths} · a weapon in damage counts ${state.damage_number}` +
      ` · ${state.scoring === "cards" ? "fewest cards wins" : "lowest damage wins"}`));
}

// This round's revealed cards in resolution order, each with what it did (or that it is still to come).
function resolution(state, name) {
  const list = state.selections;
  if (!list.length) {
    const waiting = state.phase === "select"
      ? "The cards are chosen in secret; they are shown together once everyone has picked."
      : "No cards revealed this round.";
    return h("section", {class: "sni-order", "aria-label": "This round's cards"},
      h("h3", {}, "This round's cards"), h("p", {class: "sni-muted"}, waiting));
  }
  const current = state.resolving;
  return h("section", {class: "sni-order", "aria-label": "This round's cards, in the order they resolve"},
    h("h3", {}, "This round's cards, weakest first"),
    h("ol", {}, list.map((entry, i) => {
      const now = current && current.card === entry.card;
      const status = entry.resolved ? "done" : now ? "now" : "waiting";
      return h("li", {class: ["sni-step", `sni-${status}`], "data-status": status},
        h("span", {class: "sni-step-no"}, `${i + 1}`),
        sniCard(entry.card, {small: true, element: entry.result?.element}),
        h("span", {class: "sni-step-who"}, name(entry.seat)),
        h("span", {class: "sni-step-what"}, entry.resolved ? `✓ ${outcome(entry, name)}` :
          now ? "▶ resolving now" : "… to come"));
    })));
}

function outcome(entry, name) {
  const r = entry.result || {};
  switch (r.event) {
    case "card_played": return r.counter_to !== undefined && r.counter_to !== null
      ? `countered: pile moved to ${name(r.counter_to)}` : `on ${name(r.target)}'s pile`;
    case "card_discarded": return r.reason === "no_legal_play" ? "discarded (no legal play)" : "discarded";
    case "block_resolved": return `protects ${name(r.protects)}`;
    case "piles_swapped": return `swapped ${name(r.piles[0])}'s and ${name(r.piles[1])}'s piles`;
    case "shuriken_thrown": return `into ${name(r.target)}'s damage`;
    case "tonfa_used": return `took ${cardName(r.took)} from ${name(r.pile)}, dropped ${cardName(r.discarded)}`;
    default: return (r.event || "done").replaceAll("_", " ");
  }
}

function teamOf(state, seat) {
  if (!state.teams) return null;
  const index = state.teams.findIndex((team) => team.includes(seat));
  return index < 0 ? null : {index, letter: "ABC"[index], mates: state.teams[index]};
}

function seatMat(view, state, ctx, seat, name) {
  const team = teamOf(state, seat);
  const resolving = state.resolving?.seat === seat;
  const marks = [
    team ? h("span", {class: ["sni-mark", `sni-team-${team.letter}`]}, `◆ Team ${team.letter}`) : null,
    state.protected.includes(seat) ? h("span", {class: "sni-mark sni-protected"}, "▣ Protected by a Block") : null,
    state.sitting_out.includes(seat) ? h("span", {class: "sni-mark"}, "◌ sits this round out") : null,
    resolving ? h("span", {class: "sni-mark sni-acting"}, "▶ resolving") : null,
    state.smoke_deciding.includes(seat) ? h("span", {class: "sni-mark"}, "☁ deciding on smoke") : null,
    view.result ? h("span", {class: ["sni-mark", view.result.winners.includes(seat) && "sni-winner"]},
      view.result.winners.includes(seat) ? `★ rank ${view.result.ranks[seat]}` : `rank ${view.result.ranks[seat]}`) : null,
  ];
  const score = state.teams
    ? `${state.totals[seat]} (team ${state.scores[seat]})` : `${state.totals[seat]}`;
  return h("section", {class: ["sni-mat", resolving && "sni-mat-acting", seat === ctx.as && "sni-mine"],
    "data-seat": seat, "aria-label": `${name(seat)}'s place`},
    h("header", {}, h("strong", {}, name(seat)), seat === ctx.as ? h("span", {class: "sni-mark"}, "you") : null,
      h("span", {class: "sni-total", title: "damage so far"}, `✖ ${score}`, h("small", {}, " damage"))),
    h("div", {class: "sni-marks"}, marks),
    combatPile(state, seat, name),
    damagePile(state, seat, name),
    handOf(view, state, ctx, seat));
}

function combatPile(state, seat, name) {
  const cards = state.combat[seat];
  const top = state.tops[seat];
  const drawn = cards.map((id, i) => {
    const isTop = i === cards.length - 1;
    const shown = sniCard(id, {element: isTop && top && parse(id).kind === "yoso-kogeki" ? top.element : undefined,
      note: isTop ? "top of the combat pile" : null});
    if (isTop) shown.dataset.pick = `card:${id}`; // a Tonfa may drop the top card it takes
    return shown;
  });
  let caption = "Combat pile";
  if (top) {
    const el = top.element ? `${ELEMENTS[top.element].symbol} ${ELEMENTS[top.element].name}` : "no element";
    caption = `Combat pile · top ${top.strength}, ${el}`;
  }
  const figure = pile(caption, drawn, {empty: "no pile"});
  figure.classList.add("sni-combat");
  figure.dataset.pick = `pile:${seat}`; // a card played on it, a pile moved to it, a Sai's swap, a Tonfa's take
  figure.setAttribute("aria-label", `${name(seat)}'s combat pile`);
  return figure;
}

function damagePile(state, seat, name) {
  const figure = pile(`Damage pile · ${state.damage[seat].length} card${state.damage[seat].length === 1 ? "" : "s"}`,
    state.damage[seat].map((id) => sniCard(id, {small: true})), {empty: "no damage"});
  figure.classList.add("sni-damage");
  figure.dataset.pick = `damage:${seat}`; // a Shuriken's target
  figure.setAttribute("aria-label", `${name(seat)}'s damage pile`);
  return figure;
}

function handOf(view, state, ctx, seat) {
  const size = state.hand_sizes[seat];
  const known = state.hands ? state.hands[seat] : seat === ctx.as && state.hand ? state.hand : null;
  const chosen = seat === ctx.as && view.my_choice?.type === "select" ? view.my_choice.card : null;
  const cards = known
    ? known.map((id) => {
      const shown = sniCard(id, {small: true, selected: id === chosen, note: id === chosen ? "chosen" : null});
      if (seat === ctx.as) shown.dataset.pick = `card:${id}`; // one's own hand: a card to select, or to drop (Tonfa)
      return shown;
    })
    : hiddenCards(size);
  const caption = known ? `Hand · ${known.length}` + (chosen ? ` · chosen: ${cardName(chosen)}` : "")
    : `Hand · ${size} face down`;
  const figure = pile(caption, cards, {empty: "empty"});
  figure.classList.add("sni-hand");
  return figure;
}

function lastDamage(state, name) {
  const log = state.last_damage;
  if (!log) return null;
  const parts = [];
  for (const used of log.smoked) {
    parts.push(`☁ ${name(used.seat)} used ${cardName(used.card)}${used.covers !== used.seat ? ` for ${name(used.covers)}` : ""}`);
  }
  for (const taken of log.took_damage) parts.push(`✖ ${name(taken.seat)} took ${taken.cards} card${taken.cards === 1 ? "" : "s"}`);
  for (const drawn of log.drawn) parts.push(`↩ ${name(drawn.seat)} drew ${cardName(drawn.card)} back`);
  if (!parts.length) parts.push("nobody took damage");
  return h("p", {class: "sni-last"}, h("strong", {}, `Round ${log.round}'s damage: `), parts.join(" · "));
}

function weaponsPanel(state) {
  const chip = (id, out) => {
    const {kind, strength} = parse(id);
    const weapon = WEAPONS[kind];
    return h("li", {class: ["sni-chip", out && "sni-out"], title: weapon.does},
      h("span", {class: "sni-chip-symbol", "aria-hidden": "true"}, weapon.symbol), ` ${weapon.name} ${strength}`,
      out ? h("span", {class: "sni-muted"}, " (out)") : null);
  };
  return h("section", {class: "sni-weapons", "aria-label": "Weapons"},
    h("h3", {}, "Weapons"),
    h("ul", {}, state.weapons_in_play.map((id) => chip(id, false)), state.weapons_out.map((id) => chip(id, true))),
    h("p", {class: "sni-muted sni-legend"}, Object.values(WEAPONS).map((w) => `${w.symbol} ${w.name}: ${w.does}`).join(" · ")),
    h("p", {class: "sni-muted sni-legend"}, "▲ Fire beats ♣ Wood · ♣ Wood beats ≈ Water · ≈ Water beats ▲ Fire"));
}

function discardPanel(state) {
  const figure = pile(`Discards · ${state.discards.length}`, state.discards.map((id) => sniCard(id, {small: true})),
    {empty: "none yet"});
  figure.classList.add("sni-discards");
  return figure;
}

// ---------------------------------------------------------------- playing on the table

// A card of one's hand (select, in secret); the resolving card's use: a combat pile to play it on (one's
// own first, then another seat's to counter the pile there), two piles to swap (Sai, either order), a damage
// pile (Shuriken), a pile then the card to drop (Tonfa: a card of the hand or the top card taken).
// Discarding and the smoke bomb's yes or no are buttons.
export function picker(legal) {
  const sai = legal.actions.some((action) => action.type === "sai");
  return listPicker(legal.actions, (action) => {
    switch (action.type) {
      case "select": return [`card:${action.card}`];
      case "play": return "counter_to" in action ? [`pile:${action.target}`, `pile:${action.counter_to}`] : [`pile:${action.target}`];
      case "sai": return action.piles.map((seat) => `pile:${seat}`);
      case "shuriken": return [`damage:${action.target}`];
      case "tonfa": return [`pile:${action.pile}`, `card:${action.discard}`];
      default: return null;
    }
  }, {ordered: !sai});
}

export function actionLabel(action, ctx) {
  const name = (seat) => ctx?.names?.[seat] ?? `seat ${seat}`;
  const whose = (seat) => (seat === ctx?.as ? "your own" : `${name(seat)}'s`);
  switch (action.type) {
    case "select": return `Pick ${cardName(action.card)}`;
    case "play": return `Play on ${whose(action.target)} pile` + ("counter_to" in action ? `, moving it to ${name(action.counter_to)}` : "");
    case "discard": return "Discard the card";
    case "sai": return `Swap ${name(action.piles[0])}'s and ${name(action.piles[1])}'s piles`;
    case "shuriken": return `Throw the Shuriken into ${whose(action.target)} damage pile`;
    case "tonfa": return `Take ${name(action.pile)}'s top card, drop ${cardName(action.discard)}`;
    case "smoke": return action.use ? "Use a smoke bomb" : "No smoke bomb";
    default: return null;
  }
}

// ---------------------------------------------------------------- the log

export function sentence(event, ctx) {
  const data = event.data || {};
  const name = (seat) => ctx.names[seat] ?? `seat ${seat}`;
  const list = (ids) => ids.map(cardName).join(", ");
  switch (event.type) {
    case "cards_dealt": {
      const own = Object.entries(data.private || {});
      const dealt = `7 cards were dealt to each seat; ${data.weapons_in_play.length} weapons are in play`;
      return own.length === 1 ? `${dealt}. ${name(Number(own[0][0]))}'s hand: ${list(own[0][1].hand)}.` : `${dealt}.`;
    }
    case "round_started":
      return `Round ${data.round} began` + (data.sitting_out.length ? `; ${data.sitting_out.map(name).join(", ")} sit${data.sitting_out.length === 1 ? "s" : ""} it out.` : ".");
    case "choice_committed": {
      const mine = data.private?.[String(data.seat)]?.action;
      if (!mine) return null;
      if (mine.type === "select") return `${name(data.seat)} secretly picked ${cardName(mine.card)}.`;
      if (mine.type === "smoke") return `${name(data.seat)} secretly chose ${mine.use ? "to use a smoke bomb" : "not to smoke"}.`;
      return null;
    }
    case "selections_revealed":
      return `Round ${data.round}'s cards revealed: ${data.order.map((o) => `${name(o.seat)} ${cardName(o.card)}`).join(", ")}` +
        (data.protected.length ? `; ${data.protected.map(name).join(", ")} protected.` : ".");
    case "action_taken": return actionSentence(data, name);
    case "card_played": {
      const as = parse(data.card).kind === "yoso-kogeki" ? ` (as ${data.element ? ELEMENTS[data.element].name : "no element"})` : "";
      const counter = data.counter_to !== undefined && data.counter_to !== null
        ? ` and moved the pile to ${name(data.counter_to)}` : "";
      return `${name(data.seat)} played ${cardName(data.card)}${as} on ${data.target === data.seat ? "their own" : `${name(data.target)}'s`} pile${counter}.`;
    }
    case "card_discarded":
      return `${name(data.seat)} discarded ${cardName(data.card)}${data.reason === "no_legal_play" ? " (no legal play)" : ""}.`;
    case "block_resolved":
      return `${name(data.seat)}'s ${cardName(data.card)} protects ${data.protects === data.seat ? "them" : name(data.protects)} this round.`;
    case "piles_swapped":
      return `${name(data.seat)}'s ${cardName(data.card)} swapped ${name(data.piles[0])}'s and ${name(data.piles[1])}'s combat piles.`;
    case "shuriken_thrown":
      return `${name(data.seat)} threw ${cardName(data.card)} into ${data.target === data.seat ? "their own" : `${name(data.target)}'s`} damage pile.`;
    case "tonfa_used":
      return `${name(data.seat)}'s ${cardName(data.card)} took ${cardName(data.took)} from ${name(data.pile)}'s pile` +
        (data.discarded === data.took ? " and dropped it." : ` and discarded ${cardName(data.discarded)}.`);
    case "smoke_requested": return `Smoke bombs? ${data.seats.map(name).join(", ")} decide in secret.`;
    case "smoke_bombs_revealed": {
      const used = data.used.map((u) => `${name(u.seat)} used ${cardName(u.card)}${u.covers !== u.seat ? ` for ${name(u.covers)}` : ""}`);
      return used.length ? `Smoke: ${used.join(", ")}.` : "Nobody used a smoke bomb.";
    }
    case "damage_taken":
      return `${name(data.seat)} took ${data.cards.length} card${data.cards.length === 1 ? "" : "s"} as damage (top: ${cardName(data.top)}).`;
    case "card_drawn":
      return `${name(data.seat)} drew ${cardName(data.card)} back from their pile` + (data.by !== data.seat ? ` (${name(data.by)}'s smoke bomb).` : ".");
    case "round_ended":
      return `Round ${data.round} ended` + (data.discarded.length ? `; ${list(data.discarded)} discarded.` : ".");
    case "cards_discarded":
      return `${name(data.seat)} discarded ${list(data.cards)}: only smoke bombs left.`;
    case "game_finished":
      return `The cards ran out after round ${data.round}: damage ${data.totals.map((t, s) => `${name(s)} ${t}`).join(", ")}.`;
    default: return null;
  }
}

function actionSentence(data, name) {
  const a = data.action || {};
  const by = data.by ? ` (${data.by})` : "";
  const who = name(data.seat);
  switch (a.type) {
    case "play": return `${who} chose to play on ${a.target === data.seat ? "their own pile" : name(a.target)}${a.counter_to !== undefined ? `, countering to ${name(a.counter_to)}` : ""}${by}.`;
    case "discard": return `${who} chose to discard${by}.`;
    case "sai": return `${who} chose to swap ${name(a.piles[0])}'s and ${name(a.piles[1])}'s piles${by}.`;
    case "shuriken": return `${who} aimed a Shuriken at ${name(a.target)}${by}.`;
    case "tonfa": return `${who} used a Tonfa on ${name(a.pile)}'s pile${by}.`;
    default: return null;
  }
}
