// h(tag, props, ...children): a DOM element. props: attributes (data-*, aria-*, class, ...), `on` for
// listeners ({click: fn}); children: nodes, strings, numbers, arrays, null/false (skipped).
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "on") {
      for (const [event, listener] of Object.entries(value)) el.addEventListener(event, listener);
    } else if (key === "class") {
      el.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : value;
    } else if (key in el && !key.includes("-") && typeof value !== "string") {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

// Replace everything inside `el` with `children`.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// Make `el`'s children like `children`, changing only what differs: a step redraws the table so, and the
// browser then lays out and repaints only the cards that changed, not the whole table. Listeners are not
// compared (the table's drawings attach none; the page listens on the table itself).
export function morph(el, ...children) {
  const fresh = document.createElement(el.tagName);
  append(fresh, children);
  morphChildren(el, fresh);
  return el;
}

function morphChildren(old, fresh) {
  const have = old.childNodes;
  const want = [...fresh.childNodes];
  want.forEach((node, i) => {
    const current = have[i];
    if (!current) old.append(node);
    else if (current.nodeName !== node.nodeName || current.nodeType !== node.nodeType) old.replaceChild(node, current);
    else if (current.nodeType === Node.TEXT_NODE) { if (current.data !== node.data) current.data = node.data; }
    else if (current.nodeType !== Node.ELEMENT_NODE) old.replaceChild(node, current);
    else {
      morphAttributes(current, node);
      morphChildren(current, node);
    }
  });
  while (have.length > want.length) old.lastChild.remove();
}

function morphAttributes(current, wanted) {
  for (const {name} of [...current.attributes]) if (!wanted.hasAttribute(name)) current.removeAttribute(name);
  for (const {name, value} of wanted.attributes) if (current.getAttribute(name) !== value) current.setAttribute(name, value);
}
