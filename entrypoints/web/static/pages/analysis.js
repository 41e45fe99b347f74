// The analysis of a finished game on its page (POST/GET /v1/games/{id}/analysis, docs/analysis.md): ask for
// it, follow its progress (GET about once a second while it is queued or running), then show it three ways:
// an evaluation graph over the game's steps (a point per decision, coloured and sized by its label; a click
// goes to its step), a badge on each decision's line of the log, and under the table the engine's
// suggestion at the decision the step shows (or is about to show). A label is always in words or a symbol
// as well as a colour. game.js owns the page: it calls update(step, ctx) after drawing each step.
import {ApiError, api} from "../lib/api.js";
import {fill, h} from "../lib/h.js";

const STYLE = "/app/analysis.css";
const SVG = "http://www.w3.org/2000/svg";
const POLL_MS = 1000;
// A label's symbol (as lichess writes them) and its words: never the colour alone.
export const LABELS = {
  best: {symbol: "✓", words: "best"},
  good: {symbol: "○", words: "good"},
  inaccuracy: {symbol: "?!", words: "an inaccuracy"},
  mistake: {symbol: "?", words: "a mistake"},
  blunder: {symbol: "??", words: "a blunder"},
};
const BIG = new Set(["mistake", "blunder"]);

function loadStyle() {
  if (document.querySelector(`link[href="${STYLE}"]`)) return;
  document.head.append(h("link", {rel: "stylesheet", href: STYLE}));
}

// s(tag, attrs, ...children): an SVG element (h.js makes HTML ones).
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "on") for (const [event, listener] of Object.entries(value)) el.addEventListener(event, listener);
    else if (value !== null && value !== undefined && value !== false) el.setAttribute(key, String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) el.append(child);
  return el;
}

// The page's analysis: {slot, below, update(step, ctx)}. `slot` holds the Analysis section (only once the
// game is over), `below` the suggestion lines under the table. page: {gameId, last(), finished(), log(),
// goTo(step), stepUrl(step), words(action, ctx)}.
export function analysis(page) {
  const state = {
    section: null, // <section class="analysis">, built when the game is first seen finished
    found: undefined, // the last GET/POST answer; null: not asked for yet (404); undefined: not known yet
    error: "", // a request's refusal, shown beside the button
    timer: null, // the next poll
    left: false, // the page is going away: no more polls
    step: null, // the step shown
    ctx: null, // the drawing's context of that step (names, the viewer)
    byStep: new Map(), // step -> decision, once done
    graph: null, // {svg, now(step)}: the graph drawn, for moving its current-step mark
    width: 0, // the width the graph was drawn for
  };
  const slot = h("div", {class: "analysis-slot"});
  const below = h("div", {class: "suggestions", "aria-live": "polite"});
  addEventListener("pagehide", () => { state.left = true; clearTimeout(state.timer); });

  const names = () => state.ctx?.names ?? [];
  const name = (seat) => names()[seat] ?? `seat ${seat}`;
  const words = (action) => page.words(action, state.ctx);

  function begin() {
    loadStyle();
    state.section = h("section", {class: "analysis", "aria-label": "Analysis"});
    fill(slot, state.section);
    new ResizeObserver(() => {
      if (state.found?.status === "done" && state.section.clientWidth !== state.width) drawGraph();
    }).observe(state.section);
    if (remembered()) {
      render();
      api(`/v1/games/${page.gameId}/analysis`).then(heard).catch(refused);
    } else {
      state.found = null; // unknown here: the button asks (POST answers a done analysis at once)
      render();
    }
  }

  // Whether this browser has seen the game's analysis asked for: only then does the page GET it when it
  // opens. The GET of a game nobody asked about answers 404, which every browser logs as an error in its
  // console; the POST behind the button answers an existing analysis as it is (200 when done), so a game
  // analysed elsewhere shows at the first click, and nothing is queued twice.
  function remembered(yes) {
    const key = `kifu:analysis:${page.gameId}`;
    try {
      if (yes === true) localStorage.setItem(key, "1");
      else if (yes === false) localStorage.removeItem(key);
      return localStorage.getItem(key) === "1";
    } catch {
      return false; // no storage (a private window's rules): ask with the button
    }
  }

  function heard(found) {
    remembered(true);
    state.found = found;
    state.error = "";
    if (found.status === "done") state.byStep = new Map(found.decisions.map((d) => [d.step, d]));
    render();
    clearTimeout(state.timer);
    if ((found.status === "queued" || found.status === "running") && !state.left) {
      state.timer = setTimeout(poll, POLL_MS);
    }
  }

  function poll() {
    if (state.left || !state.section.isConnected) return; // the page moved on: stop asking
    api(`/v1/games/${page.gameId}/analysis`).then(heard).catch(refused);
  }

  function refused(error) {
    if (error instanceof ApiError && error.problem.type === "/problems/not-analysed") {
      remembered(false);
      state.found = null;
    } else {
      state.error = error instanceof ApiError ? error.message : String(error);
      if (state.found === undefined) state.found = null; // the GET failed: offer the button, with why
    }
    render();
  }

  function ask() {
    state.error = "";
    api(`/v1/games/${page.gameId}/analysis`, {method: "POST"}).then(heard).catch(refused);
  }

  // The section as the analysis stands: none, queued, running, done or failed.
  function render() {
    const found = state.found;
    const heading = h("h2", {}, "Analysis");
    if (found === undefined) {
      fill(state.section, heading, h("p", {class: "note"}, "Looking for an analysis…"));
      return;
    }
    state.section.dataset.status = found ? found.status : "none";
    const button = (text) => h("button", {type: "button", "data-analyse": "", on: {click: ask}}, text);
    const error = state.error ? h("p", {class: "error", role: "alert"}, state.error) : null;
    if (!found) {
      state.graph = null;
      fill(state.section, heading,
        h("p", {}, "Each decision judged by the search engine, from what its player could see: how much of an "
          + "expected score it gave away, and what the engine would have played instead. A game analysed already "
          + "shows at once."),
        button("Analyse this game"), error);
    } else if (found.status === "queued" || found.status === "running") {
      const pct = Math.round((found.progress ?? 0) * 100);
      fill(state.section, heading,
        h("p", {class: "analysis-progress"},
          h("label", {}, found.status === "queued" ? "Waiting for a worker… " : "Analysing… ",
            h("progress", {max: 1, value: found.progress ?? 0, "aria-valuetext": `${pct}%`})),
          ` ${pct}%`), error);
    } else if (found.status === "failed") {
      state.graph = null;
      fill(state.section, heading,
        h("p", {class: "error", role: "alert"}, `The analysis failed: ${found.error ?? "no reason given"}.`),
        button("Analyse again"), error);
    } else {
      fill(state.section, heading, h("div", {class: "eval-box"}), summary(found), legendOfLabels());
      drawGraph();
    }
    labelLog();
    suggest();
  }

  // The graph: a 2-player game as one line (the first seat's expected score after each decision: 1 it
  // wins, 0 the other does); 3 or more as one line per seat (its own expected score at its decisions).
  function drawGraph() {
    const box = state.section?.querySelector(".eval-box");
    if (!box) return;
    const decisions = state.found.decisions;
    const seats = Math.max(names().length, 1 + Math.max(-1, ...decisions.map((d) => d.seat)));
    const width = Math.max(240, box.clientWidth || state.section.clientWidth || 600);
    state.width = state.section.clientWidth;
    const height = width < 500 ? 150 : 190;
    const pad = {left: 8, right: 8, top: 18, bottom: 18};
    const last = Math.max(2, page.last());
    const x = (step) => pad.left + ((step - 1) / (last - 1)) * (width - pad.left - pad.right);
    const y = (value) => pad.top + (1 - value) * (height - pad.top - pad.bottom);
    const two = seats === 2;
    const series = two ? [lineOfFirstSeat(decisions)] : [...Array(seats).keys()].map((seat) => lineOfSeat(decisions, seat));
    const lines = series.map((points, i) => s("polyline", {class: two ? "eval-line" : `eval-line seat-${i % 6}`,
      points: points.map((p) => `${x(p.step).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ")}));
    const dots = series.flatMap((points) => points.map((p) => point(p, x, y)));
    const now = s("line", {class: "now", y1: pad.top - 10, y2: height - pad.bottom + 10, "aria-hidden": "true"});
    const axis = two
      ? [s("text", {x: pad.left, y: 12, class: "axis"}, `↑ ${name(0)} ahead`),
        s("text", {x: pad.left, y: height - 4, class: "axis"}, `↓ ${name(1)} ahead`)]
      : [s("text", {x: pad.left, y: 12, class: "axis"}, "↑ first place"),
        s("text", {x: pad.left, y: height - 4, class: "axis"}, "↓ last place")];
    const svg = s("svg", {class: "eval-graph", viewBox: `0 0 ${width} ${height}`, width, height, role: "group",
      "aria-label": two ? `Evaluation: ${name(0)}'s chance of winning after each decision; a point per decision`
        : "Evaluation: each seat's expected score at its decisions; a point per decision"},
    s("rect", {class: "plot", x: pad.left, y: pad.top, width: width - pad.left - pad.right, height: height - pad.top - pad.bottom}),
    s("line", {class: "mid", x1: pad.left, x2: width - pad.right, y1: y(0.5), y2: y(0.5)}),
    axis, now, lines, dots);
    const legend = two ? null : h("ul", {class: "eval-legend", "aria-label": "Seats"},
      [...Array(seats).keys()].map((seat) => h("li", {"data-seat": seat},
        s("svg", {width: 28, height: 10, "aria-hidden": "true", class: "swatch"},
          s("line", {x1: 0, x2: 28, y1: 5, y2: 5, class: `eval-line seat-${seat % 6}`})), " ", name(seat))));
    fill(box, h("div", {class: "eval-scroll"}, svg), legend);
    state.graph = {move(step) {
      const at = x(Math.min(Math.max(step, 1), last)).toFixed(1);
      now.setAttribute("x1", at);
      now.setAttribute("x2", at);
      now.dataset.step = step;
    }};
    if (state.step !== null) state.graph.move(state.step);
  }

  // Seat 0's expected score after each decision (1 - the other's in a 2-player game); a forced decision
  // carries the last value on.
  function lineOfFirstSeat(decisions) {
    let value = 0.5;
    return decisions.map((d) => {
      if (d.value !== null && d.value !== undefined) value = d.seat === 0 ? d.value : 1 - d.value;
      return {step: d.step, value, decision: d};
    });
  }

  function lineOfSeat(decisions, seat) {
    let value = 0.5;
    return decisions.filter((d) => d.seat === seat).map((d) => {
      if (d.value !== null && d.value !== undefined) value = d.value;
      return {step: d.step, value, decision: d};
    });
  }

  // A decision's point: a link to its step (a click or Enter goes there through the page's own stepping).
  function point(p, x, y) {
    const d = p.decision;
    const big = BIG.has(d.label);
    const circle = s("circle", {cx: x(p.step).toFixed(1), cy: y(p.value).toFixed(1), r: big ? 6.5 : 4,
      class: `dot label-${d.label}`, "data-step": d.step, "data-seat": d.seat, "data-label": d.label});
    const mark = big ? s("text", {x: x(p.step).toFixed(1), y: (y(p.value) - 10).toFixed(1), class: `mark label-${d.label}`,
      "text-anchor": "middle", "aria-hidden": "true"}, LABELS[d.label].symbol) : null;
    const go = (event) => { event.preventDefault(); page.goTo(d.step); };
    return s("a", {href: page.stepUrl(d.step), class: "point", "aria-label": `Step ${d.step}: ${verdict(d)}`, on: {click: go}},
      s("title", {}, `Step ${d.step}: ${verdict(d)}`), circle, mark);
  }

  // Per seat: how many of each label, and the mean loss.
  function summary(found) {
    const seats = [...new Set(found.decisions.map((d) => d.seat))].sort((a, b) => a - b);
    const plural = {inaccuracy: "inaccuracies", mistake: "mistakes", blunder: "blunders"};
    const many = (n, label) => `${n} ${n === 1 ? label : plural[label]} (${LABELS[label].symbol})`;
    const rows = seats.map((seat) => {
      const own = found.decisions.filter((d) => d.seat === seat);
      const searched = own.filter((d) => !d.forced);
      const count = (label) => own.filter((d) => d.label === label).length;
      const mean = searched.length ? searched.reduce((t, d) => t + d.loss, 0) / searched.length : 0;
      return h("li", {"data-seat": seat}, h("strong", {}, name(seat)), ": ",
        `${own.length} decision${own.length === 1 ? "" : "s"}, `,
        ["inaccuracy", "mistake", "blunder"].map((label) => many(count(label), label)).join(", "),
        `; mean loss ${mean.toFixed(3)}`);
    });
    const when = found.level ? ` at the “${found.level}” level` : "";
    return h("div", {class: "analysis-summary"},
      h("p", {class: "note"}, `${found.decisions.length} decisions judged${when}. Click or tap a point to go to its step.`),
      h("ul", {}, rows));
  }

  function legendOfLabels() {
    return h("ul", {class: "label-legend", "aria-label": "Labels"}, Object.entries(LABELS).map(([label, {symbol}]) =>
      h("li", {}, h("span", {class: "label-badge", "data-label": label, "aria-hidden": "true"}, symbol), " ", label)));
  }

  // A decision in a sentence: who played what, the engine's choice, the values, the label.
  // (A game's actionLabel is a button's words, "Take pile 2": quoted after a colon, it reads as a move.)
  function verdict(d) {
    const who = name(d.seat);
    if (d.forced) return `${who}'s only legal move: ${words(d.action)} (forced, not judged).`;
    const played = `${who}'s move: ${words(d.action)} (${score(d.value)})`;
    if (d.label === "best") return `${played}, the engine's own choice: best (${LABELS.best.symbol}).`;
    return `${played}. The engine preferred: ${words(d.best)} (${score(d.best_value)}). `
      + `${capital(LABELS[d.label].words)} (${LABELS[d.label].symbol}): ${d.loss.toFixed(2)} of an expected score lost.`;
  }

  function capital(text) {
    return text[0].toUpperCase() + text.slice(1);
  }

  function score(value) {
    if (value === null || value === undefined) return "not searched";
    return names().length === 2 ? `a ${Math.round(value * 100)}% chance of winning` : `an expected score of ${value.toFixed(2)}`;
  }

  function badgeTitle(d) {
    const what = capital(LABELS[d.label].words);
    if (d.forced) return "Forced: the only legal move.";
    if (d.label === "best") return `Best: the engine's own choice (${score(d.value)}).`;
    return `${what}: lost ${d.loss.toFixed(2)} of an expected score; the engine preferred ${words(d.best)} (${score(d.best_value)}).`;
  }

  // Each analysed decision's line of the log: data-label and a badge (its symbol; its words for screen
  // readers; the loss and the engine's choice in its title). Done again whenever the page refills its log.
  function labelLog() {
    const log = page.log();
    if (!log) return;
    const mark = state.found?.status === "done" ? `${log.dataset.count}:${state.byStep.size}` : "";
    if (log.dataset.labelled === mark) return;
    for (const badge of log.querySelectorAll(".label-badge")) badge.remove();
    for (const item of log.querySelectorAll("li[data-label]")) delete item.dataset.label;
    for (const d of state.byStep.values()) {
      if (!mark) break;
      const item = log.querySelector(`li[data-seq='${d.step}']`);
      if (!item) continue;
      item.dataset.label = d.label;
      (item.querySelector("a") ?? item).prepend(h("span", {class: "label-badge", "data-label": d.label, title: badgeTitle(d)},
        h("span", {"aria-hidden": "true"}, d.forced ? "·" : LABELS[d.label].symbol), h("span", {class: "sr-only"}, d.forced ? "forced" : d.label)));
    }
    log.dataset.labelled = mark;
  }

  // Under the table: the decision at this step, and the one the next step makes (the position before it).
  function suggest() {
    const step = state.step;
    const shown = step === null || state.found?.status !== "done" ? []
      : [state.byStep.get(step + 1), state.byStep.get(step)].filter(Boolean);
    fill(below, shown.map((d) => h("p", {class: "suggestion", "data-step": d.step, "data-seat": d.seat, "data-label": d.label,
      "data-best": JSON.stringify(d.best)},
    h("span", {class: "label-badge", "data-label": d.label, "aria-hidden": "true"}, d.forced ? "·" : LABELS[d.label].symbol), " ",
    h("strong", {}, d.step === step ? `Step ${d.step}: ` : `Next, at step ${d.step}: `), verdict(d))));
  }

  return {
    slot,
    below,
    update(step, ctx) {
      state.step = step;
      state.ctx = ctx;
      if (!state.section && page.finished()) begin();
      if (!state.section) return;
      state.graph?.move(step);
      labelLog();
      suggest();
    },
  };
}
