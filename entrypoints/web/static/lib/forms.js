// Form fields built from the catalogue (GET /v1/catalog): a game's options from their JSON Schema
// fragments, and reading them back into the JSON the API takes.
import {h} from "./h.js";

// One option's field: a select for an enum, a checkbox for a boolean, a number for an integer, else JSON.
export function optionField(name, schema) {
  const about = schema.description ? h("small", {class: "about"}, schema.description) : null;
  const field = (control) => h("label", {class: "option"}, h("span", {class: "option-name"}, name), " ", control, about);
  if (schema.enum) {
    return field(h("select", {name: `option:${name}`, "data-type": "enum"},
      schema.enum.map((v) => h("option", {value: JSON.stringify(v), selected: v === schema.default}, String(v)))));
  }
  if (schema.type === "boolean") {
    return field(h("input", {type: "checkbox", name: `option:${name}`, "data-type": "boolean", checked: schema.default === true}));
  }
  if (schema.type === "integer" || (Array.isArray(schema.type) && schema.type.includes("integer"))) {
    return field(h("input", {type: "number", name: `option:${name}`, "data-type": "integer",
      min: schema.minimum, max: schema.maximum, value: schema.default ?? "", placeholder: "none"}));
  }
  return field(h("input", {name: `option:${name}`, "data-type": "json", value: schema.default === undefined ? "" : JSON.stringify(schema.default)}));
}

// Every option field of a game, in a fieldset.
export function optionsFieldset(game) {
  return h("fieldset", {}, h("legend", {}, "Options"),
    Object.entries(game.options).map(([name, schema]) => optionField(name, schema)));
}

// The options as the API takes them ({name: value}); an empty field is left out (the default).
export function readOptions(form) {
  const options = {};
  for (const input of form.querySelectorAll("[name^='option:']")) {
    const name = input.name.slice("option:".length);
    const type = input.dataset.type;
    if (type === "boolean") options[name] = input.checked;
    else if (input.value === "") continue;
    else if (type === "integer") options[name] = Number(input.value);
    else options[name] = JSON.parse(input.value);
  }
  return options;
}

// A problem's words, with its field errors when it has them.
export function problemText(error) {
  const errors = error.problem?.errors;
  return `${error.message}${errors ? ` ${JSON.stringify(errors)}` : ""}`;
}

// A seat's or entrant's bot level is asked only of a bot (the row's kind select says which).
export function showLevel(kind) {
  kind.closest("div").querySelector("[name=level]").hidden = kind.value !== "bot";
}
