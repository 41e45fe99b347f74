import {h} from "../lib/h.js";

// The fallback drawing of a game without a module of its own: its state as text.
export function drawTable(view) {
  return h("pre", {class: "raw-state"}, JSON.stringify(view.state, null, 2));
}

export function sentence() {
  return null; // the page's generic sentence
}
