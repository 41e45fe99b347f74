// An audit report (POST /v1/audits, GET .../audit) as people read it: the verdict in words, then each check
// with its mark and detail. The element gets data-verdict (verified, in_progress or failed).
import {fill, h} from "./h.js";

const WORDS = {
  verified: "✔ Verified: every event chained, every hidden part proven, the result re-derived.",
  in_progress: "… In progress: the chain and commitments are valid; the result is not proven yet.",
  failed: "✘ Not verified",
};

// The checks that only say where a game stands (not sealed yet), never that something is wrong.
const STANDING = ["sealed", "complete"];

export function showChecks(el, report) {
  el.dataset.verdict = report.verdict;
  return fill(el, checksOf(report));
}

// A report's verdict line (in `words`, by verdict; a failure lists the failed checks and the first bad
// event) and its checks, each an li with data-check and data-ok.
export function checksOf(report, words = WORDS) {
  const checks = report.checks || [];
  const failed = checks.filter((c) => !c.ok && !STANDING.includes(c.name));
  const headline = words[report.verdict] + (report.verdict === "failed"
    ? `: ${failed.map((c) => c.name).join(", ")}${report.first_bad_event ? ` (first bad event: ${report.first_bad_event})` : ""}` : "");
  return [h("p", {class: "verdict-line"}, headline),
    h("details", {class: "checks", open: report.verdict === "failed"}, h("summary", {}, `The checks (${checks.length})`),
      h("ul", {}, checks.map((c) => h("li", {"data-check": c.name, "data-ok": String(c.ok)},
        h("span", {"aria-hidden": "true"}, c.ok ? "✔ " : STANDING.includes(c.name) ? "– " : "✘ "),
        h("strong", {}, c.name), `: ${c.detail}`))))];
}
