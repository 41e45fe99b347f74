// A small typed front end, written against the client types openapi-typescript generates from openapi.yaml.
//
// tests/e2e/test_typescript_client.py generates ./kifu-api.ts (openapi-typescript, pinned in package.json)
// next to a copy of this file and type-checks both (tsc --noEmit, strict, tsconfig.json). This file must
// compile against the spec, and must stop compiling when a field it reads is renamed in the spec.
//
// Each `@ts-expect-error` line below is a mistake the generated types must catch. Were a type too loose
// (an open object, `{[key: string]: unknown}`), the line would compile, and tsc would then report the
// directive itself as unused: so these lines also prove that the types are precise.

import type { components, paths } from "./kifu-api";

type Schemas = components["schemas"];

/** What `GET /v1/games/{id}` answers: one of five views, told apart by `game`. */
export type GameView = paths["/v1/games/{id}"]["get"]["responses"]["200"]["content"]["application/json"];
/** What `POST /v1/games/{id}/actions` takes. */
export type ActionBody = NonNullable<paths["/v1/games/{id}/actions"]["post"]["requestBody"]>["content"]["application/json"];

// -- reading views -----------------------------------------------------------------------------

/** The San Ban board as three rows of three cells: each the owner's seat, or null for an empty cell. */
export function sanBanOwners(view: GameView): (number | null)[][] | null {
  if (view.game !== "san-ban") return null;
  const board = view.state.board; // `game` narrowed the view to SanBanView: its state is SanBanState
  return [0, 3, 6].map((row) => board.slice(row, row + 3).map((cell) => (cell === null ? null : cell.owner)));
}

/** The edges of a San Ban card the viewer may see. */
export function sanBanEdges(state: Schemas["SanBanState"], card: string): number[] | null {
  const def = state.cards[card];
  return def === undefined ? null : [def.top, def.right, def.bottom, def.left];
}

/** Each Front Line seat's front line and reinforcements, with its captured count. */
export function frontLines(view: GameView): { seat: number; front: string[]; reinforcements: string[]; captured: number }[] {
  if (view.game !== "front-line") return [];
  const { front, reinforcements, scores } = view.state;
  return front.map((line, seat) => ({ seat, front: line, reinforcements: reinforcements[seat] ?? [], captured: scores[seat] ?? 0 }));
}

/** A line of text per game about the table, reading each game's own state. */
export function headline(view: GameView): string {
  switch (view.game) {
    case "san-ban":
      return `San Ban (${view.state.mode}), next: ${view.state.next_player ?? "nobody"}`;
    case "nin-nal":
      return `Nin Nal round ${view.state.round} of ${view.state.rounds}, tops: ${view.state.piles.map((p) => p.at(-1)).join(" ")}`;
    case "kiri-ai":
      return `Kiri-ai round ${view.state.round}, distance ${view.state.distance ?? "?"}, red ${view.state.samurai[0]?.stance}`;
    case "san-ni-ichi":
      return `San, Ni, Ichi! round ${view.state.round} (${view.state.phase}), totals ${view.state.totals.join("/")}`;
    case "front-line":
      return `Front Line turn ${view.state.turns}, seat ${view.state.turn ?? "-"} to play`;
  }
}

/** How the game ended, with each game's own extras. */
export function ending(view: GameView): string | null {
  if (view.result === null) return null;
  const winners = view.result.winners.join(", ");
  switch (view.game) {
    case "kiri-ai":
      return `${winners} won (${view.result.reason})`;
    case "front-line":
      return `${winners} won by ${view.result.reason} after ${view.result.turns ?? 0} turns`;
    case "san-ban":
      return view.result.claimed ? `${winners} won and claimed ${view.result.claimed.card}` : `${winners} won`;
    default:
      return `${winners} won`;
  }
}

// -- building actions --------------------------------------------------------------------------

export function placeCard(cell: number, card: string, version: number): ActionBody {
  const action: Schemas["SanBanAction"] = { type: "place", cell, card };
  return { action, expected_version: version };
}

export const program: Schemas["KiriAiAction"] = { type: "program", first: "charge", second: "high-strike" };
export const declaration: Schemas["FrontLineAction"] = {
  type: "attack",
  attacks: [{ target: "paper-7", cards: ["lizard-q"] }, { target: "lizard-5", cards: ["rock-2", "scissors-8"] }],
};
export const resign: Schemas["Action"] = { type: "resign" };
export const newGame: Schemas["CreateGameRequest"] = {
  game: "front-line",
  players: [{ name: "ann" }, { name: "hal", bot: "greedy" }, { open: true }],
  options: { jokers: true, deck: "per-player" },
};

// -- following events --------------------------------------------------------------------------

/** A San Ban event, told in words: `type` narrows each event to its own `data`. */
export function narrate(event: Schemas["SanBanEvent"]): string {
  switch (event.type) {
    case "card_placed":
      return `seat ${event.data.seat} put ${event.data.card} (${event.data.card_def.top} on top) on cell ${event.data.cell}`;
    case "cards_flipped":
      return `${event.data.cells.length} card(s) flipped to seat ${event.data.seat} by ${event.data.rule}`;
    case "decks_dealt":
      return `decks of ${event.data.deck_sizes.join(" and ")}; my deck: ${event.data.private?.["0"]?.deck.join(", ") ?? "hidden"}`;
    case "action_taken":
      return `seat ${event.data.seat}: ${event.data.action.type}${event.data.by ? ` (${event.data.by})` : ""}`;
    case "game_ended":
      return `winners: ${event.data.result.winners.join(", ")}`;
    default:
      return event.type;
  }
}

/** Any game's event: a type several games use carries either game's data. */
export function attackers(event: Schemas["Event"]): number[] {
  if (event.type !== "attacked") return [];
  return "attacks" in event.data ? [event.data.seat] : [event.data.seat, event.data.target];
}

// -- mistakes the types catch ------------------------------------------------------------------

// @ts-expect-error: a San Ban placement names a cell, not a pile
export const wrongPlace: Schemas["SanBanAction"] = { type: "place", pile: 2 };
// @ts-expect-error: Nin Nal has no program
export const wrongGame: Schemas["NinNalAction"] = { type: "program", first: "charge", second: "special" };
// @ts-expect-error: not a face of a Kiri-ai card
export const wrongFace: Schemas["KiriAiAction"] = { type: "program", first: "charge", second: "jump" };
// @ts-expect-error: Front Line's options, not San Ban's
export const wrongOptions: Schemas["CreateGameRequest"] = { game: "san-ban", players: [{ name: "a" }, { name: "b" }], options: { jokers: true } };

export function wrongState(view: Schemas["FrontLineView"]): unknown {
  // @ts-expect-error: a Front Line table has no board
  return view.state.board;
}

export function wrongEvent(event: Schemas["SanBanCardPlacedEvent"]): unknown {
  // @ts-expect-error: a San Ban card is placed on a cell, not a pile
  return event.data.pile;
}
