// /audit: verify a file, as anyone can: a game's record or a tournament's archive, sent to POST /v1/audits
// (which stores nothing). The verdict and every check are shown; for a record that fails, its events are
// listed with the first bad one marked (data-seq is the event's position in the file, as the report counts).
import {ApiError, api} from "../lib/api.js";
import {showChecks} from "../lib/audit.js";
import {fill, h} from "../lib/h.js";

const root = document.getElementById("app");

function start() {
  const input = h("input", {type: "file", name: "record", accept: ".json,application/json", "aria-label": "A record or archive file",
    on: {change: () => input.files[0] && verify(input.files[0])}});
  const drop = h("label", {class: "drop", on: {
    dragover: (e) => { e.preventDefault(); drop.classList.add("over"); },
    dragleave: () => drop.classList.remove("over"),
    drop: (e) => { e.preventDefault(); drop.classList.remove("over"); if (e.dataTransfer.files[0]) verify(e.dataTransfer.files[0]); },
  }}, h("span", {}, "Choose a file, or drop it here: a game's record (", h("code", {}, "GET /v1/games/{id}/record"),
    ") or a tournament's archive (", h("code", {}, "GET /v1/tournaments/{id}/record"), ")."), input);
  fill(root, h("h1", {}, "Verify a record"),
    h("p", {}, "The server re-derives every event from the rules, checks the hash chain and every commitment, and says whether the result is proven. It keeps nothing. The same checks run offline with ",
      h("code", {}, "kifu verify"), " and ", h("code", {}, "kifu verify-tournament"), "."),
    drop, h("div", {class: "verdict", role: "status", "aria-live": "polite"}), h("div", {class: "audited"}));
}

async function verify(file) {
  const verdict = root.querySelector(".verdict");
  const audited = root.querySelector(".audited");
  fill(audited);
  delete verdict.dataset.verdict;
  let body;
  try {
    body = JSON.parse(await file.text());
  } catch (error) {
    verdict.dataset.verdict = "failed";
    verdict.textContent = `✘ ${file.name} is not JSON: ${error.message}`;
    return;
  }
  verdict.textContent = `Verifying ${file.name}…`;
  try {
    const report = await api("/v1/audits", {method: "POST", body});
    showChecks(verdict, report);
    fill(audited, describe(body, report));
  } catch (error) {
    verdict.textContent = error instanceof ApiError ? error.message : String(error);
  }
}

// What the file holds: a record's events (the first bad one marked) or an archive's games.
function describe(body, report) {
  if (Array.isArray(body?.tournament?.events)) {
    const games = Array.isArray(body.games) ? body.games : [];
    return h("section", {}, h("h2", {}, `Tournament ${body.tournament.id ?? ""}: ${body.tournament.events.length} events, ${games.length} games`),
      h("ul", {class: "games"}, games.map((g) => h("li", {}, g.game_id ? h("a", {href: `/games/${g.game_id}`}, g.game_id) : "a game",
        ` · ${g.game ?? ""} · ${Array.isArray(g.events) ? g.events.length : 0} events`))));
  }
  if (!Array.isArray(body?.events)) return null;
  const bad = report.first_bad_event;
  const list = h("ol", {class: "record-events"}, body.events.map((event, i) => h("li", {"data-seq": i + 1, class: i + 1 === bad && "bad"},
    h("span", {class: "seq"}, i + 1), ` ${event?.type ?? "?"}`, i + 1 === bad ? h("strong", {}, " ← the first bad event") : null)));
  queueMicrotask(() => list.querySelector("li.bad")?.scrollIntoView({block: "center"}));
  return h("section", {class: "log"}, h("h2", {}, `Game ${body.game_id ?? ""}: ${body.events.length} events`,
    body.game_id ? h("small", {}, " ", h("a", {href: `/games/${body.game_id}`}, "open its page")) : null), list);
}

start();
