// /tournaments/{id}: a tournament. Its standings with their tie-breaks (live), its rounds with their tables
// linking to the games, the duplicate format's shared deals (committed before a round, revealed after it),
// its log in sentences, the archive to download and verify, and, with the organiser's token in this tab,
// the organiser's commands. Live through the tournament's public stream; never polled.
import {ApiError, api, newKey, tokens} from "../lib/api.js";
import {showChecks} from "../lib/audit.js";
import {fill, h} from "../lib/h.js";

const root = document.getElementById("app");
const tid = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1] || "");
const GAME_NAMES = {"san-ban": "San Ban", "nin-nal": "Nin Nal", "kiri-ai": "Kiri-ai", "san-ni-ichi": "San, Ni, Ichi!",
  "front-line": "Front Line"};
const STATUS = {created: "not started yet", running: "in play", paused: "paused", finished: "finished"};

const page = {
  view: null, // GET /v1/tournaments/{id}
  events: [], // its log, as anyone may read it
  standings: null, // the read model (GET .../standings), or the final standings
  held: {}, // the tokens this tab holds: {organiser, <entrant>: token}
  parts: null,
  stream: null,
  refreshing: null,
};

async function start() {
  page.held = tokens.all(tid);
  page.view = await api(`/v1/tournaments/${tid}`);
  await loadLog();
  page.parts = buildFrame();
  await refreshStandings();
  draw();
  if (page.view.status !== "finished") follow();
}

async function loadLog() {
  page.events = [];
  let after = 0;
  for (;;) {
    const part = await api(`/v1/tournaments/${tid}/events?after=${after}&limit=1000`);
    page.events.push(...part.items);
    if (part.next === null) return;
    after = part.next;
  }
}

function buildFrame() {
  const parts = {head: h("div", {class: "t-head"}), organiser: h("div"), standings: h("section", {class: "t-standings", "aria-label": "Standings"}),
    rounds: h("section", {class: "t-rounds", "aria-label": "Rounds"}), log: h("ol"), archive: archivePanel()};
  fill(root, parts.head, parts.organiser,
    h("div", {class: "game-layout"}, h("div", {}, parts.standings, parts.rounds),
      h("aside", {class: "log", "aria-label": "The tournament's log"}, h("h2", {}, "Log"), parts.log)),
    parts.archive);
  return parts;
}

function draw() {
  const {head, organiser, standings, rounds, log} = page.parts;
  const view = page.view;
  fill(head, h("h1", {}, `${GAME_NAMES[view.game] ?? view.game}: ${view.format} tournament `, h("small", {}, tid)),
    h("p", {"data-status": view.status}, h("span", {class: ["badge", view.status === "running" && "live"]}, STATUS[view.status] ?? view.status),
      ` ${view.round ? `round ${view.round} of ${view.rounds}` : `${view.rounds} round${view.rounds === 1 ? "" : "s"}`}`,
      ` · tables of ${view.table_size} · ${view.entrants.length} entrants · points per place ${view.scoring.join("-")}`));
  fill(organiser, organiserPanel());
  fill(standings, standingsTable());
  fill(rounds, h("h2", {}, "Rounds"), roundsList());
  fill(log, page.events.map((event) => h("li", {"data-seq": event.seq}, h("span", {class: "seq"}, event.seq), " ", sentence(event))));
}

function name(entrant) {
  return page.view.entrants[entrant]?.name ?? `entrant ${entrant}`;
}

// ---- standings ----

async function refreshStandings() {
  if (page.view.standings) {
    page.standings = {final: true, rows: page.view.standings, version: page.view.version};
    return;
  }
  const answer = await api(`/v1/tournaments/${tid}/standings`);
  if (page.view.standings) return refreshStandings(); // it ended while we asked: the final ones, never older
  page.standings = {final: false, rows: answer.standings, version: answer.version};
}

// The read model is a moment behind the log: fetch it again until it has caught up with what was heard.
function standingsSoon() {
  if (page.refreshing) return;
  let tries = 0;
  const again = async () => {
    await refreshStandings();
    fill(page.parts.standings, standingsTable());
    const last = page.events.at(-1)?.seq ?? 0;
    if (!page.standings.final && page.standings.version < last && ++tries < 20) page.refreshing = setTimeout(again, 250);
    else page.refreshing = null;
  };
  page.refreshing = setTimeout(again, 0);
}

function number(x) {
  return x === null || x === undefined ? "–" : String(Math.round(x * 100) / 100);
}

function standingsTable() {
  const {final, rows} = page.standings;
  const points = page.view.format === "duplicate" ? "Points are matchpoints: against each entrant who held the same seat of the round's deal, 1 for doing better, ½ for doing as well."
    : `Points per place: ${page.view.scoring.join(", ")}; a bye scores first place's points.`;
  const caption = final ? `Final standings after ${page.view.round} round${page.view.round === 1 ? "" : "s"}`
    : page.view.status === "created" ? "None yet: the tournament has not started"
      : `Live, after event ${page.standings.version} of ${page.events.at(-1)?.seq ?? 0}`;
  return [h("h2", {}, final ? "Final standings" : "Standings"),
    h("div", {class: "scroll-x"}, h("table", {class: "standings", "data-standings": final ? "final" : "live"},
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, ["Place", "Entrant", "Points", "Buchholz", "Mean rank", "Games", "Byes"].map((c) => h("th", {scope: "col"}, c)))),
      h("tbody", {}, rows.length ? rows.map((row) => h("tr", {"data-entrant": row.entrant, "data-place": row.place, class: row.withdrawn && "withdrawn"},
        h("td", {}, row.place), h("th", {scope: "row"}, row.name, row.bot ? h("span", {class: "tag"}, `bot: ${row.bot}`) : null,
          row.withdrawn ? h("span", {class: "tag"}, "withdrawn") : null),
        h("td", {}, number(row.points)), h("td", {}, number(row.buchholz)), h("td", {}, number(row.mean_rank)),
        h("td", {}, row.games), h("td", {}, row.byes)))
        : h("tr", {}, h("td", {colspan: 7, class: "empty"}, "No results yet."))))),
    h("p", {class: "note"}, `${points} Ties are broken by Buchholz (the points of everyone met), then by the mean rank (lower is better).`)];
}

// ---- rounds, from the log ----

function rounds() {
  const byRound = new Map();
  const round = (n) => byRound.get(n) ?? byRound.set(n, {round: n, tables: new Map(), byes: [], deal: null, revealed: null, closed: false}).get(n);
  for (const {type, data} of page.events) {
    if (type === "round_paired") {
      const r = round(data.round);
      r.byes = data.byes;
      r.deal = data.deal ?? null;
      for (const t of data.tables) r.tables.set(t.table, {table: t.table, entrants: t.entrants, game: null, result: null, forfeit: null});
    } else if (type === "game_started") {
      const t = round(data.round).tables.get(data.table);
      if (t) t.game = data.game;
    } else if (type === "game_finished") {
      const t = round(data.round).tables.get(data.table);
      if (t) t.result = {ranks: data.ranks, scores: data.scores};
    } else if (type === "game_forfeited") {
      for (const r of byRound.values()) for (const t of r.tables.values()) if (t.game === data.game) t.forfeit = data;
    } else if (type === "round_closed") {
      const r = round(data.round);
      r.closed = true;
      r.revealed = data.deal ?? null;
    }
  }
  return [...byRound.values()].sort((a, b) => b.round - a.round);
}

function roundsList() {
  const all = rounds();
  if (!all.length) return h("p", {class: "empty"}, page.view.status === "created" ? "Round 1 is paired when the organiser starts the tournament." : "No round yet.");
  return all.map((r) => h("section", {class: "t-round", "data-round": r.round, "aria-label": `Round ${r.round}`},
    h("h3", {}, `Round ${r.round}`, r.closed ? h("span", {class: "tag"}, "closed") : h("span", {class: "tag turn"}, "in play")),
    r.deal ? dealLine(r) : null,
    h("ul", {class: "t-tables"}, [...r.tables.values()].map((t) => tableItem(r, t))),
    r.byes.length ? h("p", {class: "byes"}, `Bye: ${r.byes.map(name).join(", ")}`) : null));
}

// The duplicate format's shared deal: its commitment (published when the round was paired), and once the
// round is closed what it was committed to (every table of the round was dealt from it).
function dealLine(r) {
  const committed = r.deal.seed_hash ? `seed SHA-256 ${short(r.deal.seed_hash)}` : `commitment ${short(r.deal.commitment ?? "")}`;
  const revealed = r.revealed ? (r.revealed.seed ? `revealed: seed ${short(r.revealed.seed)}` : "revealed: the fixed deal and its salt (in the archive)")
    : "revealed when the round is closed";
  return h("p", {class: "t-deal", "data-deal": r.revealed ? "revealed" : "committed"},
    "♠ One deal for every table: ", h("code", {title: r.deal.seed_hash ?? r.deal.commitment}, committed), ` · ${revealed}`);
}

function short(hex) {
  return hex.length > 16 ? `${hex.slice(0, 12)}…` : hex;
}

function tableItem(r, t) {
  const seats = t.entrants.map((entrant, seat) => {
    const rank = t.result?.ranks?.[seat];
    return h("span", {class: "t-seat"}, name(entrant), rank ? ` (${ordinal(rank)}${t.result.scores ? `, ${t.result.scores[seat]}` : ""})` : "");
  });
  const mine = t.entrants.findIndex((entrant) => page.held[entrant]);
  const link = t.game ? h("a", {href: `/games/${t.game}`, "data-game-id": t.game,
    on: {click: () => { if (mine >= 0) tokens.put(t.game, mine, page.held[t.entrants[mine]]); }}},
  t.result ? "replay" : mine >= 0 ? "play" : "watch") : h("span", {class: "empty"}, "waiting");
  return h("li", {"data-table": t.table}, h("span", {class: "t-table-name"}, `Table ${t.table + 1}: `),
    seats.flatMap((s, i) => (i ? [" vs ", s] : [s])), " · ", link,
    t.forfeit ? h("span", {class: "tag"}, `forfeit: ${t.forfeit.reason ?? ""}`) : null);
}

function ordinal(n) {
  return `${n}${{1: "st", 2: "nd", 3: "rd"}[n] ?? "th"}`;
}

// ---- the log ----

export const TOURNAMENT_EVENT_TYPES = [
  "entrant_withdrawn", "game_finished", "game_forfeited", "game_started", "round_closed", "round_paired",
  "tournament_created", "tournament_finished", "tournament_paused", "tournament_resumed", "tournament_started",
];

function tableEntrants(round, table) {
  const paired = page.events.find((e) => e.type === "round_paired" && e.data.round === round);
  return paired?.data.tables.find((t) => t.table === table)?.entrants ?? [];
}

function sentence({type, data}) {
  switch (type) {
    case "tournament_created": return `The tournament was created for ${data.entrants.length} entrants.`;
    case "tournament_started": return "The organiser started the tournament.";
    case "tournament_paused": return `The organiser paused the tournament${data.reason ? `: ${data.reason}` : ""}.`;
    case "tournament_resumed": return "The organiser resumed the tournament.";
    case "entrant_withdrawn": return `${name(data.entrant)} withdrew${data.reason ? `: ${data.reason}` : ""}.`;
    case "round_paired": return `Round ${data.round} was paired: ${data.tables.length} table${data.tables.length === 1 ? "" : "s"}${data.byes.length ? `, bye for ${data.byes.map(name).join(", ")}` : ""}.`;
    case "game_started": return `Round ${data.round}, table ${data.table + 1}: the game started.`;
    case "game_finished": {
      const seated = tableEntrants(data.round, data.table);
      const winners = seated.filter((_, seat) => data.ranks[seat] === 1).map(name);
      const scores = data.scores ? ` (${data.scores.join("-")})` : "";
      return `Round ${data.round}, table ${data.table + 1}: ${winners.length === 1 ? `${winners[0]} won` : `${winners.join(" and ")} shared first`}${scores}.`;
    }
    case "game_forfeited": return `A game was forfeited (seat ${data.seat})${data.reason ? `: ${data.reason}` : ""}.`;
    case "round_closed": return `Round ${data.round} was closed${data.deal ? "; its deal was revealed" : ""}.`;
    case "tournament_finished": return `The tournament is over: ${name(data.standings[0]?.entrant)} won.`;
    default: return type.replaceAll("_", " ");
  }
}

// ---- the organiser ----

function organiserPanel() {
  const token = page.held.organiser;
  if (!token || page.view.status === "finished") return null;
  const command = (path, body) => async (e) => {
    const button = e.currentTarget;
    button.disabled = true;
    try {
      page.view = await api(`/v1/tournaments/${tid}/${path}`, {method: "POST", token, body, key: newKey()});
      draw();
    } catch (error) {
      button.disabled = false;
      page.parts.organiser.querySelector(".error").textContent = error instanceof ApiError ? error.message : String(error);
    }
  };
  const reason = (path) => (e) => {
    const why = prompt("The reason (it is written in the log)?");
    if (why) command(path, {reason: why})(e);
  };
  const status = page.view.status;
  return h("section", {class: "organiser", "aria-label": "The organiser's commands"},
    h("h2", {}, "You organise this tournament"),
    h("div", {class: "actions"},
      status === "created" ? h("button", {type: "button", "data-command": "start", on: {click: command("start")}}, "Start") : null,
      status === "running" ? h("button", {type: "button", "data-command": "pause", on: {click: reason("pause")}}, "Pause") : null,
      status === "paused" ? h("button", {type: "button", "data-command": "resume", on: {click: command("resume")}}, "Resume") : null,
      page.view.entrants.filter((e) => !e.withdrawn).map((e) => h("button", {type: "button", "data-withdraw": e.entrant,
        on: {click: reason(`entrants/${e.entrant}/withdraw`)}}, `Withdraw ${e.name}`))),
    h("p", {class: "error", role: "alert"}));
}

// ---- the archive ----

function archivePanel() {
  const verdict = h("div", {class: "verdict", role: "status"});
  const download = async () => {
    const archive = await api(`/v1/tournaments/${tid}/record`);
    const link = h("a", {href: URL.createObjectURL(new Blob([JSON.stringify(archive)], {type: "application/json"})),
      download: `${tid}.archive.json`});
    document.body.append(link);
    link.click();
    link.remove();
  };
  const verify = async () => {
    verdict.textContent = "Verifying every game and every pairing…";
    const archive = await api(`/v1/tournaments/${tid}/record`);
    showChecks(verdict, await api("/v1/audits", {method: "POST", body: archive}));
  };
  const failed = (error) => { verdict.textContent = error instanceof ApiError ? error.message : String(error); };
  return h("section", {class: "audit", "aria-label": "Archive"}, h("h2", {}, "Archive"),
    h("p", {}, "The tournament's log and every game's record in one file, verifiable by anyone (", h("code", {}, "kifu verify-tournament"), ")."),
    h("button", {type: "button", on: {click: () => download().catch(failed)}}, "Download the archive"), " ",
    h("button", {type: "button", "data-verify": "", on: {click: () => verify().catch(failed)}}, "Verify it"), verdict);
}

// ---- live ----

function follow() {
  const after = page.events.at(-1)?.seq ?? 0;
  page.stream = new EventSource(`/v1/tournaments/${tid}/events/stream?after=${after}`);
  const heard = async (message) => {
    const event = JSON.parse(message.data);
    if (page.events.some((e) => e.seq === event.seq)) return;
    page.events.push(event);
    if (["tournament_started", "tournament_paused", "tournament_resumed", "entrant_withdrawn", "round_paired", "tournament_finished"].includes(event.type)) {
      page.view = await api(`/v1/tournaments/${tid}`);
    }
    if (event.type === "tournament_finished") {
      page.stream.close();
      await refreshStandings();
    } else {
      standingsSoon();
    }
    draw();
  };
  // One event at a time, in the order heard: a view fetched for an earlier event must never overwrite the
  // one fetched for a later event (the final standings would give way to an older round's).
  let queue = Promise.resolve();
  const inOrder = (message) => { queue = queue.then(() => heard(message)).catch(report); };
  for (const type of TOURNAMENT_EVENT_TYPES) page.stream.addEventListener(type, inOrder);
}

function report(error) {
  const detail = error instanceof ApiError ? error.problem.detail || error.problem.title : String(error);
  fill(root, h("div", {class: "problem", role: "alert"}, h("h1", {}, "This tournament could not be shown"), h("p", {}, detail),
    h("p", {}, h("a", {href: "/"}, "Back to the lobby"))));
}

start().catch(report);
