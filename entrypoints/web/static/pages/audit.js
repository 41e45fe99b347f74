// /audit: verify a file, as anyone can: a game's record or a tournament's archive. A record is verified in
// this browser (lib/verify.js: the JavaScript verifier, with the server's keys) and by POST /v1/audits
// (which stores nothing, and re-runs the rules); an archive by the server only. Both verdicts and every
// check are shown; for a record that fails, its events are listed with the first bad one marked (data-seq
// is the event's position in the file, as the reports count).
import {ApiError} from "../lib/api.js";
import {fill, h} from "../lib/h.js";
import {verifyTwice} from "../lib/verify.js";

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
    h("p", {}, "A game's record is verified twice. In this browser, the JavaScript verifier (",
      h("a", {href: "/app/verifier/kifu-verify.mjs"}, "kifu-verify.mjs"), ") checks the hash chain, every commitment, the deal re-derived from the seed, the server's signature (against ",
      h("code", {}, "GET /v1/keys"), ") and the record's place in the transparency log. The server re-runs the rules: every event re-derived, the result proven. It keeps nothing. A tournament's archive is verified by the server. The same checks run offline with ",
      h("code", {}, "kifu verify"), ", ", h("code", {}, "kifu verify-tournament"), " and ", h("code", {}, "node kifu-verify.mjs"), "."),
    drop, h("div", {class: "verdict", role: "status", "aria-live": "polite"}), h("div", {class: "audited"}));
}

async function verify(file) {
  const verdict = root.querySelector(".verdict");
  const audited = root.querySelector(".audited");
  fill(audited);
  delete verdict.dataset.verdict;
  let text;
  let body;
  try {
    text = await file.text();
    body = JSON.parse(text);
  } catch (error) {
    verdict.dataset.verdict = "failed";
    verdict.textContent = `✘ ${file.name} is not JSON: ${error.message}`;
    return;
  }
  verdict.textContent = `Verifying ${file.name}…`;
  try {
    const archive = body !== null && typeof body === "object" && body.format === "kifu-tournament/1";
    const result = await verifyTwice(verdict, text, {archive}); // the file's exact text, to both verifiers
    fill(audited, describe(body, result));
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
