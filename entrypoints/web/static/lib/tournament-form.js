// The lobby's form for organisers: a new tournament (POST /v1/tournaments) from the catalogue: the game
// and its options, the format, rounds, table size, and the entrants (people by name, bots by level).
// The answer's tokens (the organiser's, each person's) are kept in this tab (sessionStorage), never in a URL.
import {ApiError, api, newKey, tokens} from "./api.js";
import {optionsFieldset, problemText, readOptions, showLevel} from "./forms.js";
import {fill, h} from "./h.js";

const FORMATS = {
  "round-robin": "round-robin: every pairing once",
  swiss: "swiss: paired by points, no rematch",
  duplicate: "duplicate: every table plays the round's deal",
};

export function tournamentForm(catalog) {
  const form = h("form", {class: "new-tournament", "data-form": "tournament", on: {submit: (e) => { e.preventDefault(); create(form); }}});
  const gameSelect = h("select", {name: "game", "aria-label": "Tournament game", on: {change: () => fillGame()}},
    catalog.map((g) => h("option", {value: g.id}, g.name)));
  const body = h("div");
  const fillGame = () => fill(body, ...gameFields(catalog.find((g) => g.id === gameSelect.value)));
  fill(form,
    h("label", {}, "Game ", gameSelect),
    h("label", {}, "Format ", h("select", {name: "format"}, Object.entries(FORMATS).map(([v, text]) => h("option", {value: v}, text)))),
    h("label", {}, "Rounds ", h("input", {type: "number", name: "rounds", min: 1, max: 200, placeholder: "default"})),
    body,
    h("button", {type: "submit"}, "Create the tournament"),
    h("p", {class: "error", role: "alert"}));
  fillGame();
  return form;
}

function gameFields(game) {
  const sizes = [];
  for (let n = game.players.min; n <= game.players.max; n++) sizes.push(n);
  const entrants = h("fieldset", {class: "entrants-form"}, h("legend", {}, "Entrants"));
  const add = (kind) => entrants.append(entrantRow(game, entrants.querySelectorAll(".entrant-row").length, kind));
  for (let i = 0; i < 2 * game.players.min; i++) add(i === 0 ? "person" : "bot");
  return [
    h("label", {}, "Table size ", h("select", {name: "table_size"}, sizes.map((n) => h("option", {value: n}, `${n} seats`)))),
    entrants,
    h("button", {type: "button", on: {click: () => add("bot")}}, "Add an entrant"),
    optionsFieldset(game),
  ];
}

function entrantRow(game, index, kind) {
  const levels = game.bots ?? [];
  return h("div", {class: "entrant-row"},
    h("label", {}, `Entrant ${index} `, h("select", {name: "kind", "aria-label": `Entrant ${index}`, on: {change: (e) => showLevel(e.target)}},
      ["person", "bot"].map((k) => h("option", {value: k, selected: k === kind}, k)))),
    h("input", {name: "name", "aria-label": `Entrant ${index} name`, value: kind === "bot" ? `bot${index}` : `player${index}`}),
    h("select", {name: "level", "aria-label": `Entrant ${index} bot level`, hidden: kind !== "bot"}, levels.map((l) => h("option", {value: l}, l))));
}

async function create(form) {
  const error = form.querySelector(".error");
  error.textContent = "";
  const entrants = [...form.querySelectorAll(".entrant-row")].map((row) => {
    const name = row.querySelector("[name=name]").value;
    return row.querySelector("[name=kind]").value === "bot" ? {name, bot: row.querySelector("[name=level]").value} : {name};
  });
  const rounds = form.querySelector("[name=rounds]").value;
  const body = {
    game: form.querySelector("[name=game]").value,
    format: form.querySelector("[name=format]").value,
    table_size: Number(form.querySelector("[name=table_size]").value),
    entrants,
    options: readOptions(form),
    ...(rounds ? {rounds: Number(rounds)} : {}),
  };
  try {
    const made = await api("/v1/tournaments", {method: "POST", body, key: newKey()});
    if (made.organiser_token) tokens.put(made.id, "organiser", made.organiser_token);
    for (const entrant of made.entrants) if (entrant.token) tokens.put(made.id, entrant.entrant, entrant.token);
    location.href = `/tournaments/${made.id}`;
  } catch (e) {
    error.textContent = e instanceof ApiError ? problemText(e) : String(e);
  }
}
