// Playing on the table: what can be clicked, and which action a run of clicks makes.
//
// A game's drawing marks the places a player may click with data-pick="<token>" ("card:sb-019",
// "cell:4", "pile:2", ...). Its module's picker(legal, view, ctx) turns GET /actions' answer into
//   {next(selection) -> {options, complete}, buttons}
// where `selection` is the tokens clicked so far (in order), `options` the Set of tokens that may be
// clicked next, `complete` the actions the selection makes as it stands, and `buttons` the actions that
// have nothing on the table to click (pass, choose who starts, ...), offered as buttons.
// The page (pages/game.js) acts at once when the selection makes exactly one action and nothing more can
// be added; when it makes one but could go on (a Front Line attack may take more cards), it offers the
// action to confirm.

// A picker over listed actions: picksOf(action) gives the tokens that make it (null: a button).
// Ordered: the tokens must be clicked in that order (Kiri-ai's program: first, then second); else in any.
export function listPicker(actions, picksOf, {ordered = false} = {}) {
  const paths = [];
  const buttons = [];
  for (const action of actions) {
    const picks = picksOf(action);
    if (picks && picks.length) paths.push({action, picks});
    else buttons.push(action);
  }
  const fits = ordered
    ? (picks, selection) => selection.every((token, i) => picks[i] === token)
    : (picks, selection) => selection.every((token) => picks.includes(token));
  return {
    buttons,
    next(selection) {
      const options = new Set();
      const complete = [];
      for (const {action, picks} of paths) {
        if (!fits(picks, selection)) continue;
        if (picks.length === selection.length) complete.push(action);
        const rest = ordered ? picks.slice(selection.length, selection.length + 1) : picks.filter((t) => !selection.includes(t));
        for (const token of rest) options.add(token);
      }
      return {options, complete};
    },
  };
}

// A picker for "choose `count` of `from`" (San Ban's pick of five, Front Line's refill): the tokens are
// prefix + id; the action is make(ids), in the order clicked.
export function choosePicker({count, from}, prefix, make) {
  return {
    buttons: [],
    next(selection) {
      const ids = selection.map((token) => token.slice(prefix.length));
      if (ids.length >= count) return {options: new Set(), complete: ids.length === count ? [make(ids)] : []};
      return {options: new Set(from.filter((id) => !ids.includes(id)).map((id) => prefix + id)), complete: []};
    },
  };
}

// Only buttons: for a game or a step whose actions have nothing to click on the table.
export function buttonsOnly(actions) {
  return {buttons: actions, next: () => ({options: new Set(), complete: []})};
}
