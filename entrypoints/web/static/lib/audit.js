// An audit report (POST /v1/audits, GET .../audit) as people read it: the verdict in words, then each check
// with its mark and detail. The element gets data-verdict (verified, in_progress or failed).
import {fill, h} from "./h.js";

const WORDS = {
  verified: "✔ Verified: every event chained, every hidden part proven, the result re-derived.",
  in_progress: "… In progress: the chain and commitments are valid; the result is not proven yet.",
  failed: "✘ Not verified",
};

export function showChecks(el, report) {
  el.dataset.verdict = report.verdict;
  const failed = (report.checks || []).filter((c) => !c.ok && !["sealed", "complete"].includes(c.name));
  const headline = WORDS[report.verdict] + (report.verdict === "failed"
    ? `: ${failed.map((c) => c.name).join(", ")}${report.first_bad_event ? ` (first bad event: ${report.first_bad_event})` : ""}` : "");
  return fill(el, h("p", {class: "verdict-line"}, headline),
    h("details", {class: "checks", open: report.verdict === "failed"}, h("summary", {}, `The checks (${(report.checks || []).length})`),
      h("ul", {}, (report.checks || []).map((c) => h("li", {"data-check": c.name, "data-ok": String(c.ok)},
        h("span", {"aria-hidden": "true"}, c.ok ? "✔ " : ["sealed", "complete"].includes(c.name) ? "– " : "✘ "),
        h("strong", {}, c.name), `: ${c.detail}`)))));
}
