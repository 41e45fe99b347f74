import {h} from "./h.js";

// A card as people see it: its value and symbol in the corner, its name, its suit's colour AND symbol
// (colour is never the only carrier of meaning), an accessible name, and `data-card` = its id
// ("hidden" when face down: nobody, the page included, knows which card it is).
//
// card({id, label, value, symbol, suit, detail, small}) / card({hidden: true})
//   label: the accessible and visible name ("Fire 7", "Katana"); value, symbol: the corner;
//   suit: a class for the colour (fire, water, wood, rock, paper, scissors, ...); detail: a line under
//   the name (San Ban's side values, ...).
export function card({id, label, value, symbol, suit, detail, small, hidden, selected, on} = {}) {
  if (hidden) {
    return h("div", {class: ["card", "face-down", small && "small"], "data-card": "hidden",
      role: "img", "aria-label": "a face-down card"}, h("span", {class: "back", "aria-hidden": "true"}, "✦"));
  }
  return h("div", {class: ["card", suit && `suit-${suit}`, small && "small", selected && "selected"],
    "data-card": id, role: "img", "aria-label": label || id, title: label || id, on},
    h("span", {class: "corner", "aria-hidden": "true"}, value ?? "", symbol ? h("span", {class: "symbol"}, symbol) : null),
    h("span", {class: "name", "aria-hidden": "true"}, label || id),
    detail ? h("span", {class: "detail", "aria-hidden": "true"}, detail) : null);
}

// A row of cards with a caption ("Your hand", "Damage pile"), any of them possibly face down.
export function pile(caption, cards, {empty = "none"} = {}) {
  return h("figure", {class: "pile"}, h("figcaption", {}, caption),
    h("div", {class: "cards"}, cards.length ? cards : h("span", {class: "empty"}, empty)));
}
