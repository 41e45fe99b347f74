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
