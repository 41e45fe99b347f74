// lib/picks.js, the rules of playing on the table, in Node (no browser): which places may be clicked after
// which clicks, and which action the clicks make.
import assert from "node:assert/strict";
import {test} from "node:test";

import {buttonsOnly, choosePicker, listPicker} from "../../entrypoints/web/static/lib/picks.js";

const sorted = (set) => [...set].sort();

test("a listed action is made by its tokens in any order; actions without tokens are buttons", () => {
  const actions = [
    {type: "place", card: "a", cell: 0}, {type: "place", card: "a", cell: 1}, {type: "place", card: "b", cell: 0},
    {type: "choose_first", first: true},
  ];
  const picker = listPicker(actions, (a) => (a.type === "place" ? [`card:${a.card}`, `cell:${a.cell}`] : null));
  assert.deepEqual(picker.buttons, [{type: "choose_first", first: true}]);
  assert.deepEqual(sorted(picker.next([]).options), ["card:a", "card:b", "cell:0", "cell:1"]);
  assert.deepEqual(sorted(picker.next(["card:b"]).options), ["cell:0"]);
  assert.deepEqual(picker.next(["card:b"]).complete, []);
  assert.deepEqual(sorted(picker.next(["cell:1"]).options), ["card:a"]); // the cell first works too
  assert.deepEqual(picker.next(["cell:0", "card:a"]), {options: new Set(), complete: [actions[0]]});
  assert.deepEqual(picker.next(["card:b", "cell:1"]), {options: new Set(), complete: []}); // no such action
});

test("an ordered picker takes the tokens in their order only", () => {
  const actions = [{first: "x", second: "y"}, {first: "y", second: "x"}, {first: "x", second: "z"}];
  const picker = listPicker(actions, (a) => [`card:${a.first}`, `card:${a.second}`], {ordered: true});
  assert.deepEqual(sorted(picker.next([]).options), ["card:x", "card:y"]);
  assert.deepEqual(sorted(picker.next(["card:x"]).options), ["card:y", "card:z"]);
  assert.deepEqual(picker.next(["card:y", "card:x"]).complete, [actions[1]]);
  assert.deepEqual(picker.next(["card:z"]), {options: new Set(), complete: []});
});

test("a shorter action inside a longer one is complete while more may still be added", () => {
  const actions = [{cards: ["a"]}, {cards: ["a", "b"]}];
  const picker = listPicker(actions, (a) => a.cards.map((c) => `card:${c}`));
  const next = picker.next(["card:a"]);
  assert.deepEqual(next.complete, [actions[0]]);
  assert.deepEqual(sorted(next.options), ["card:b"]);
});

test("choose count of from: the ids in the order clicked, nothing more once count are chosen", () => {
  const picker = choosePicker({count: 2, from: ["p", "q", "r"]}, "card:", (cards) => ({type: "pick", cards}));
  assert.deepEqual(sorted(picker.next(["card:q"]).options), ["card:p", "card:r"]);
  assert.deepEqual(picker.next(["card:r", "card:p"]), {options: new Set(), complete: [{type: "pick", cards: ["r", "p"]}]});
  assert.deepEqual(picker.next(["card:q"]).complete, []);
});

test("buttons only: nothing to click on the table", () => {
  const picker = buttonsOnly([{type: "pass"}]);
  assert.deepEqual(picker.buttons, [{type: "pass"}]);
  assert.deepEqual(picker.next([]), {options: new Set(), complete: []});
});
