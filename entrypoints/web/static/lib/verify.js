// Verify, twice: a record is checked in this browser by the JavaScript verifier (verifier/kifu-verify.mjs,
// served at /app/verifier/: format, chain, header, private parts, seed, commitments, the deal re-derived
// from the seed, the server's signature against GET /v1/keys, the inclusion in the transparency log), and
// by the server (POST /v1/audits), which runs the same checks and re-runs the rules (`rederivation`), the
// one thing the browser's verifier leaves out. Both get the record as the exact text it is (the strict
// parsers see its bytes, never a copy re-serialised here).
//
// What is drawn into the verdict element (`.verdict`, its data-verdict the two verdicts combined: failed if
// either failed, verified only if both verified, absent when one of them could not say):
//   p.verdict-line                        the combined verdict in words
//   [data-where=browser][data-verdict]    the browser's report: its checks (li[data-check][data-ok]) and
//                                         whether the signature and the inclusion were checked (p.attest,
//                                         data-signed and data-logged as the report says them)
//   [data-where=server][data-verdict]     the server's report, or why there is none
// Each part also has data-first-bad-event when its report names one.
// A tournament archive (format kifu-tournament/1) is verified by the server only; the browser's part says so.
import {ApiError} from "./api.js";
import {checksOf} from "./audit.js";
import {fill, h} from "./h.js";

const VERIFIER = "/app/verifier/kifu-verify.mjs";
const ARCHIVE = "kifu-tournament/1";
const RANK = {failed: 0, in_progress: 1, verified: 2};

const BROWSER_WORDS = {
  verified: "✔ Verified here: every event chained, every hidden part and choice proven, the deal re-derived from the seed, signed and logged.",
  in_progress: "… In progress: the chain and commitments are valid; the game is not sealed, so the deal and the result are not proven yet.",
  failed: "✘ Not verified",
};
const SERVER_WORDS = {
  verified: "✔ Verified there: every check again, and every event re-derived by the rules, the result included.",
  in_progress: "… In progress: the chain and commitments are valid and the rules agree so far; the result is not proven yet.",
  failed: "✘ Not verified",
};

// GET `path` as text (a record as the server wrote it); a refusal is thrown as ApiError.
export async function getText(path, {token} = {}) {
  const headers = {Accept: "application/json"};
  if (token) headers.Authorization = `Bearer ${token}`;
  const answer = await fetch(path, {headers});
  const text = await answer.text();
  if (!answer.ok) throw new ApiError(problemOf(text, answer), answer.status);
  return text;
}

function problemOf(text, answer) {
  try {
    return JSON.parse(text);
  } catch {
    return {title: answer.statusText || `HTTP ${answer.status}`};
  }
}

// Verify `text` (a record or an archive, already known to be JSON) in both places, drawing each part into
// `el` as its answer comes. Answers {verdict, first_bad_event}: the combined verdict (null when undecided)
// and the lowest first bad event either verifier names.
export async function verifyTwice(el, text, {archive = false} = {}) {
  const browserPart = part("browser", "In this browser", "kifu-verify.mjs: chain, commitments, deal, signature, log inclusion");
  const serverPart = part("server", "On the server", "POST /v1/audits: the rules re-run, and every check again");
  const headline = h("p", {class: "verdict-line"}, "Verifying…");
  delete el.dataset.verdict;
  fill(el, headline, h("div", {class: "verifiers"}, browserPart, serverPart));
  fill(browserPart.body, archive ? "" : h("p", {}, "Verifying in this browser…"));
  fill(serverPart.body, h("p", {}, "Asking the server…"));

  const inBrowser = (archive ? Promise.resolve({archive: true}) : browserReport(text))
    .then((report) => ({report}), (error) => ({error}))
    .then((answer) => { showBrowser(browserPart, answer); return answer; });
  const onServer = postAudit(text)
    .then((report) => ({report}), (error) => ({error}))
    .then((answer) => { showServer(serverPart, answer); return answer; });
  const [browser, server] = await Promise.all([inBrowser, onServer]);

  const reports = [browser.report?.archive ? null : browser.report, server.report];
  const verdict = combined(reports, archive);
  const bad = reports.map((r) => r?.first_bad_event).filter((n) => Number.isInteger(n));
  const firstBad = bad.length ? Math.min(...bad) : null;
  if (verdict) el.dataset.verdict = verdict;
  fill(headline, sentence(verdict, browser, server, firstBad, archive));
  return {verdict, first_bad_event: firstBad};
}

function part(where, title, what) {
  const body = h("div", {class: "verifier-body"});
  const el = h("section", {class: "verifier", "data-where": where, "aria-label": `${title}: ${what}`},
    h("h3", {}, title, " ", h("small", {}, `(${what})`)), body);
  el.body = body;
  return el;
}

// failed if either failed; otherwise the weaker of the two, when both said; null when one could not say.
function combined([browser, server], archive) {
  const verdicts = [browser?.verdict, server?.verdict];
  if (verdicts.includes("failed")) return "failed";
  if (archive) return server?.verdict ?? null;
  if (!browser || !server) return null;
  return RANK[browser.verdict] <= RANK[server.verdict] ? browser.verdict : server.verdict;
}

function sentence(verdict, browser, server, firstBad, archive) {
  const failedIn = (report) => (report?.checks || []).filter((c) => !c.ok && !["sealed", "complete"].includes(c.name)).map((c) => c.name);
  if (verdict === "failed") {
    const where = [];
    if (browser.report?.verdict === "failed") where.push(`in this browser (${failedIn(browser.report).join(", ")})`);
    if (server.report?.verdict === "failed") where.push(`on the server (${failedIn(server.report).join(", ")})`);
    return `✘ Not verified: it fails ${where.join(" and ")}${firstBad ? `; the first bad event is ${firstBad}` : ""}.`;
  }
  if (archive) {
    if (verdict === "verified") return "✔ Verified by the server: every game of the archive and every pairing.";
    if (verdict === "in_progress") return "… In progress: the server found nothing wrong; the tournament is not over.";
    return "The server could not verify the archive (below).";
  }
  if (verdict === "verified") return "✔ Verified twice: in this browser (chain, commitments, deal, signature, log inclusion) and on the server (the rules re-run).";
  if (verdict === "in_progress") return "… In progress: both verifiers find the chain and commitments valid; the result is not proven yet.";
  const missing = [browser.error ? "this browser's verifier could not run" : null, server.error ? "the server could not be asked" : null].filter(Boolean);
  return `Not fully verified: ${missing.join(", and ")}; what was checked is below.`;
}

// ---------------------------------------------------------------- in this browser

let verifier = null; // the module, imported once (dynamically: a page without it still verifies on the server)
let ed25519 = null; // whether this browser's WebCrypto has Ed25519 (a promise, asked once)

async function browserReport(text) {
  verifier ??= import(VERIFIER).catch((error) => { verifier = null; throw error; });
  const [{verifyRecord}, keys] = await Promise.all([verifier, serverKeys()]);
  const report = await verifyRecord(text, {keys: keys.set ?? undefined});
  return {...report, keysWhy: keys.why};
}

// The server's keys (GET /v1/keys), or why the signature cannot be checked here: {set} or {why}.
async function serverKeys() {
  ed25519 ??= crypto.subtle.importKey("raw", RFC8032_KEY, {name: "Ed25519"}, false, ["verify"]).then(() => true, () => false);
  if (!(await ed25519)) return {why: "this browser's WebCrypto has no Ed25519"};
  try {
    const answer = await fetch("/v1/keys", {headers: {Accept: "application/json"}});
    if (!answer.ok) return {why: `GET /v1/keys answered ${answer.status}`};
    return {set: await answer.json()};
  } catch (error) {
    return {why: `GET /v1/keys could not be fetched (${error.message})`};
  }
}

// RFC 8032's test key 1 (a valid public key): only to ask whether Ed25519 is there.
const RFC8032_KEY = Uint8Array.from("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a".match(/../g), (x) => parseInt(x, 16));

function showBrowser(el, {report, error}) {
  if (error) {
    delete el.dataset.verdict;
    return fill(el.body, h("p", {class: "error"}, "The browser's verifier stopped with an error, so nothing was checked here (a bug: please report it with the file): ",
      h("code", {}, String(error?.stack?.split("\n")[0] ?? error))));
  }
  if (report.archive) {
    delete el.dataset.verdict;
    return fill(el.body, h("p", {class: "archive-note"}, "A tournament archive is verified by the server only: this browser's verifier (kifu-verify.mjs) checks game records, one at a time."));
  }
  shown(el, report);
  return fill(el.body, checksOf(report, BROWSER_WORDS), attestation(report));
}

// Whether the signature and the inclusion in the log were checked against the server's keys, in words.
function attestation(report) {
  const check = (name) => (report.checks || []).find((c) => c.name === name);
  const holds = (c) => (c && !c.ok ? "it does NOT hold" : "it holds");
  const signature = {
    checked: `The signature was checked against the server's keys (GET /v1/keys): ${holds(check("signature"))}.`,
    unchecked: `The signature was NOT checked (${report.keysWhy ?? "no keys"}): only that it states this game's end.`,
    unsigned: "The record is not signed (an older record, or one not sealed yet): there is no signature to check.",
  }[report.signed];
  const logged = {
    checked: `Its inclusion in the transparency log was checked, the log's signed head included: ${holds(check("inclusion"))}.`,
    unchecked: `Its inclusion proof was checked, the log head's signature NOT (${report.keysWhy ?? "no keys"}): ${holds(check("inclusion"))} as far as that goes.`,
    absent: "It carries no inclusion proof: its place in the transparency log was not checked.",
  }[report.logged];
  return h("p", {class: "attest", "data-signed": report.signed, "data-logged": report.logged}, signature, " ", logged);
}

// ---------------------------------------------------------------- on the server

async function postAudit(text) {
  const answer = await fetch("/v1/audits", {method: "POST", body: text,
    headers: {Accept: "application/json", "Content-Type": "application/json"}});
  const body = await answer.text();
  if (!answer.ok) throw new ApiError(problemOf(body, answer), answer.status);
  return JSON.parse(body);
}

function showServer(el, {report, error}) {
  if (error) {
    delete el.dataset.verdict;
    const why = error instanceof ApiError ? `the server refused it: ${error.message}` : `the server could not be reached (${error.message}), so the rules were not re-run`;
    return fill(el.body, h("p", {class: "error unreached"}, `No answer: ${why}.`));
  }
  shown(el, report);
  return fill(el.body, checksOf(report, SERVER_WORDS));
}

// A part's data-verdict, and data-first-bad-event when its report names one.
function shown(el, report) {
  el.dataset.verdict = report.verdict;
  if (Number.isInteger(report.first_bad_event)) el.dataset.firstBadEvent = String(report.first_bad_event);
}
