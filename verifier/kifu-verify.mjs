/**
 * kifu-verify.mjs: a second, independent verifier of Kifu game records, written from
 * docs/record-format.md and docs/fairness.md alone. One ES module, no dependencies; it runs under
 * Node 20 (`node verifier/kifu-verify.mjs RECORD.json [--keys JWKS.json]`, or `--batch` over NDJSON on
 * stdin) and in a browser (`verifyRecord`, `verifyInclusion`, `verifyConsistency`, `verifyLogHead`),
 * using only WebCrypto: SHA-256, HMAC-SHA256 (the seeded generator) and Ed25519.
 *
 * What it checks, named as in docs/record-format.md ("Verification"):
 *   format         the record's shape and every envelope's exact keys and types
 *   hash_chain     seq 1, 2, ...; each prev the hash before; each hash over its public body
 *   header         every field besides `events` is what the events commit to; no unknown field
 *   private_parts  every part and salt shown matches its commitment; sealed: every part shown
 *   seed           the seal publishes the seed of event 1's seed_hash and the head before it, last
 *   commitments    every revealed secret choice matches its commitment
 *   deal           the setup event's drawn cards (and coin, specials, orders) are what the seed deals
 *                  (or the fixed deal gives), for all five games (fairness.md, "Draws per game")
 *   signature      the record's signature states this game's end; with keys, Ed25519 by a valid key
 *   inclusion      the transparency log's audit path proves the signed statement in its signed head
 *   sealed         only for a record that is not sealed: the verdict is in_progress
 *
 * What it leaves to the Python verifier (domain/audit.py, `rederivation`): re-running the rules.
 * Whether each action was legal, every event after the deal, the result, who acted (`by`), and the
 * non-drawn fields of the opening (card stats, battlefields, event 1 as the rules write it) are not
 * checked here, so a record this verifier calls verified may still fail there.
 *
 * Values: strict JSON is parsed by its own parser (objects as Map, integers as BigInt, floats as
 * Number), and every comparison goes through canonical JSON, byte for byte Python's json.dumps.
 */

const subtle = globalThis.crypto.subtle;
const UTF8 = new TextEncoder();
const GENESIS = "0".repeat(64);
const RECORD_FORMAT = "kifu-record/2";
const OLD_RECORD_FORMAT = "kifu-record/1";
const IN_PROGRESS_NOTE =
  "the game is in progress: private parts, their salts and the seed are withheld; " +
  "the hash chain can be checked, the rest once the game is over";
const IN_PROGRESS_DETAIL =
  "in progress: chain and commitments valid, result not proven (the log does not end with game_sealed, " +
  "so the seed is not published and the deal cannot be re-derived)";
const HEX64 = /^[0-9a-f]{64}$/;
const LOWER_HEX = /^(?:[0-9a-f]{2})+$/;
const SALT = /^[0-9a-f]{32}$/;
const SEAT_KEY = /^(?:0|[1-9][0-9]*)$/;
const INT64 = 2n ** 63n;
const MAX_DEPTH = 64;
const MISSING = Symbol("missing");
const ROTATION_GRACE_MS = 10 * 60 * 1000;
const SEALED_GAME = "kifu-sealed-game/1";
const LOG_HEAD = "kifu-log-head/1";

// ---------------------------------------------------------------- strict JSON

export class StrictJSONError extends Error {}

/** Parse `text` (a string, or UTF-8 bytes) as strict JSON: Maps, BigInt integers, Number floats. */
export function parseStrictJSON(text) {
  if (typeof text !== "string") text = decodeUTF8(text);
  if (text.charCodeAt(0) === 0xfeff) throw new StrictJSONError("the text starts with a byte-order mark");
  const parser = new Parser(text);
  parser.ws();
  const value = parser.value(1);
  parser.ws();
  if (parser.i !== text.length) parser.fail("extra data after the value");
  return value;
}

function decodeUTF8(bytes) {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw new StrictJSONError("the text starts with a byte-order mark: JSON is UTF-8 without one");
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new StrictJSONError("not UTF-8: JSON text is UTF-8");
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
const ESCAPES = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

class Parser {
  constructor(text) {
    this.text = text;
    this.i = 0;
  }

  fail(what) {
    throw new StrictJSONError(`not strict JSON at character ${this.i}: ${what}`);
  }

  ws() {
    const t = this.text;
    while (this.i < t.length) {
      const c = t.charCodeAt(this.i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
      this.i++;
    }
  }

  value(depth) {
    const c = this.text[this.i];
    if (c === "{") return this.object(depth);
    if (c === "[") return this.array(depth);
    if (c === '"') return this.string();
    if (c === "-" || (c >= "0" && c <= "9")) return this.number();
    for (const [word, v] of [["true", true], ["false", false], ["null", null]]) {
      if (this.text.startsWith(word, this.i)) {
        this.i += word.length;
        return v;
      }
    }
    return this.fail("expected a value (NaN and Infinity are not JSON)");
  }

  object(depth) {
    if (depth > MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH} levels`);
    const out = new Map();
    this.i++;
    this.ws();
    if (this.text[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      if (this.text[this.i] !== '"') this.fail("expected a key");
      const key = this.string();
      if (out.has(key)) this.fail(`the key ${JSON.stringify(key)} appears twice in one object`);
      this.ws();
      if (this.text[this.i] !== ":") this.fail("expected ':'");
      this.i++;
      this.ws();
      out.set(key, this.value(depth + 1));
      this.ws();
      const c = this.text[this.i++];
      if (c === "}") return out;
      if (c !== ",") this.fail("expected ',' or '}'");
      this.ws();
    }
  }

  array(depth) {
    if (depth > MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH} levels`);
    const out = [];
    this.i++;
    this.ws();
    if (this.text[this.i] === "]") {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth + 1));
      this.ws();
      const c = this.text[this.i++];
      if (c === "]") return out;
      if (c !== ",") this.fail("expected ',' or ']'");
      this.ws();
    }
  }

  string() {
    const t = this.text;
    let out = "";
    let start = ++this.i;
    for (;;) {
      if (this.i >= t.length) this.fail("unterminated string");
      const c = t.charCodeAt(this.i);
      if (c === 0x22) break;
      if (c < 0x20) this.fail("a control character in a string");
      if (c !== 0x5c) {
        this.i++;
        continue;
      }
      out += t.slice(start, this.i);
      const e = t[this.i + 1];
      if (e === "u") {
        const hex = t.slice(this.i + 2, this.i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("a bad \\u escape");
        out += String.fromCharCode(parseInt(hex, 16));
        this.i += 6;
      } else if (e in ESCAPES) {
        out += ESCAPES[e];
        this.i += 2;
      } else {
        this.fail("a bad escape");
      }
      start = this.i;
    }
    out += t.slice(start, this.i);
    this.i++;
    if (!out.isWellFormed()) this.fail("a string holds a lone surrogate: it is no Unicode text");
    return out;
  }

  number() {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.text);
    if (!m) this.fail("a bad number");
    const text = m[0];
    this.i += text.length;
    if (m[1] === undefined && m[2] === undefined) {
      if (text.length > 21) this.fail("integer out of range");
      const value = BigInt(text);
      if (value < -INT64 || value >= INT64) this.fail("integer out of range");
      return value;
    }
    const value = Number(text);
    if (!Number.isFinite(value) || value < -(2 ** 63) || value >= 2 ** 63) this.fail("number out of range");
    return value;
  }
}

// ---------------------------------------------------------------- canonical JSON and exact values

/** Compare two strings by Unicode code point (as Python sorts), not by UTF-16 code unit. */
export function byCodePoint(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codeUnitRank(x) - codeUnitRank(y);
  }
  return a.length - b.length;
}

function codeUnitRank(u) {
  if (u >= 0xd800 && u <= 0xdfff) return u + 0x2000; // a surrogate stands for a code point above U+FFFF
  return u >= 0xe000 ? u - 0x800 : u;
}

/** Python's repr of a float: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function pyFloatRepr(x) {
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mantissa, expText] = x.toExponential().split("e");
  const exp = Number(expText);
  const sign = mantissa.startsWith("-") ? "-" : "";
  const digits = mantissa.replace("-", "").replace(".", "");
  if (exp < -4 || exp >= 16) {
    const frac = digits.length > 1 ? "." + digits.slice(1) : "";
    return `${sign}${digits[0]}${frac}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  return `${sign}${whole}.${digits.slice(exp + 1) || "0"}`;
}

function escapeString(s) {
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c) continue;
    out += s.slice(start, i) + escapeChar(c);
    start = i + 1;
  }
  return out + s.slice(start) + '"';
}

function escapeChar(c) {
  const named = { 0x22: '\\"', 0x5c: "\\\\", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t", 0x08: "\\b", 0x0c: "\\f" };
  return named[c] ?? "\\u" + c.toString(16).padStart(4, "0");
}

/** Canonical JSON text: Python's json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False). */
export function canonicalText(v) {
  if (v === null) return "null";
  if (v === true) return "true";
  if (v === false) return "false";
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") return pyFloatRepr(v);
  if (typeof v === "string") return escapeString(v);
  if (Array.isArray(v)) return "[" + v.map(canonicalText).join(",") + "]";
  if (v instanceof Map) {
    const keys = [...v.keys()].sort(byCodePoint);
    return "{" + keys.map((k) => escapeString(k) + ":" + canonicalText(v.get(k))).join(",") + "}";
  }
  throw new TypeError(`not a JSON value: ${String(v)}`);
}

/** Canonical JSON bytes (UTF-8), what every hash covers. */
export function canonicalJSON(v) {
  return UTF8.encode(canonicalText(v));
}

/** Whether two JSON values are the same value, type included: 0, 0.0 and false differ. */
export function same(a, b) {
  if (a === MISSING || b === MISSING) return a === b;
  return canonicalText(a) === canonicalText(b);
}

/** A Map from a plain object literal (derived values are written as literals, integers as BigInt). */
function obj(fields) {
  return new Map(Object.entries(fields));
}

const isMap = (v) => v instanceof Map;
const isInt = (v) => typeof v === "bigint";
const isStr = (v) => typeof v === "string";
const get = (m, key) => (isMap(m) && m.has(key) ? m.get(key) : MISSING);

/** Python's str() of a JSON value, for the text a header derives (`"<game>/<rules_version>"`). */
function pyStr(v) {
  if (isStr(v)) return v;
  return pyRepr(v);
}

function pyRepr(v) {
  if (v === null) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (isInt(v)) return v.toString();
  if (typeof v === "number") return pyFloatRepr(v);
  if (isStr(v)) return v.includes("'") && !v.includes('"') ? `"${v}"` : `'${v.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
  if (Array.isArray(v)) return "[" + v.map(pyRepr).join(", ") + "]";
  return "{" + [...v].map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(", ") + "}";
}

/** Python's truth value of a JSON value. */
function truthy(v) {
  if (v === null || v === false || v === 0n || v === 0 || v === "") return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isMap(v)) return v.size > 0;
  return true;
}

// ---------------------------------------------------------------- hashes and encodings

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function toHex(bytes) {
  let out = "";
  for (const b of new Uint8Array(bytes)) out += HEX[b];
  return out;
}

export function fromHex(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export async function sha256(bytes) {
  return new Uint8Array(await subtle.digest("SHA-256", bytes));
}

export async function sha256Hex(bytes) {
  return toHex(await sha256(bytes));
}

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** Unpadded base64url (RFC 4648 section 5). */
export function b64url(bytes) {
  let out = "";
  let bits = 0;
  let acc = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += B64URL[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += B64URL[(acc << (6 - bits)) & 63];
  return out;
}

/** The bytes of canonical unpadded base64url, or null (padding, stray bits, other characters). */
export function fromB64url(text) {
  if (!isStr(text) || !/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const out = [];
  let acc = 0;
  let bits = 0;
  for (const ch of text) {
    acc = ((acc << 6) | B64URL.indexOf(ch)) & 0xffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >> bits) & 255);
    }
  }
  const bytes = Uint8Array.from(out);
  return b64url(bytes) === text ? bytes : null;
}

// ---------------------------------------------------------------- the seeded generator (fairness.md)

/** The documented generator: HMAC-SHA256(seed, counter) blocks, below(n) by rejection, Fisher-Yates. */
export class SeededRandom {
  static async create(seed) {
    const key = await subtle.importKey("raw", seed, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return new SeededRandom(key);
  }

  constructor(key) {
    this.key = key;
    this.counter = 0n;
    this.buffer = new Uint8Array(0);
  }

  async nextBytes(count) {
    while (this.buffer.length < count) {
      const msg = new Uint8Array(8);
      new DataView(msg.buffer).setBigUint64(0, this.counter++);
      this.buffer = concat(this.buffer, new Uint8Array(await subtle.sign("HMAC", this.key, msg)));
    }
    const out = this.buffer.slice(0, count);
    this.buffer = this.buffer.slice(count);
    return out;
  }

  async below(n) {
    if (n === 1) return 0;
    const width = Math.max(1, Math.ceil((n - 1).toString(2).length / 8));
    const limit = (256n ** BigInt(width) / BigInt(n)) * BigInt(n);
    for (;;) {
      let r = 0n;
      for (const b of await this.nextBytes(width)) r = (r << 8n) | BigInt(b);
      if (r < limit) return Number(r % BigInt(n));
    }
  }

  async shuffled(items) {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = await this.below(i + 1);
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }

  async sample(items, k) {
    return (await this.shuffled(items)).slice(0, k);
  }
}

// ---------------------------------------------------------------- the five games' deals

const range = (n) => Array.from({ length: n }, (_, i) => i);

const SAN_BAN_TIER = (tier) => range(12).map((i) => `sb-${String(12 * tier - 11 + i).padStart(3, "0")}`);
const NIN_NAL_CARDS = ["rock", "paper", "scissors"].flatMap((s) =>
  [-6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((v) => `${s}-${v}`),
);
const KIRI_AI_SPECIALS = ["kesa", "zan-tetsu", "counterattack"];
const SNI_WEAPONS = ["block-11", "block-12", "tonfa-13", "tonfa-14", "sai-15", "sai-16", "yoso-kogeki-17",
  "yoso-kogeki-18", "torinoko-19", "torinoko-20", "shuriken-21", "shuriken-22"];
const SNI_DECKS = {
  standard: { 3: [5, 6], 4: [6, 10], 5: [8, 11], 6: [10, 12] },
  "alt-1": { 3: [6, 3], 4: [8, 4], 5: [9, 8] },
  "alt-2": { 3: [7, 0], 4: [9, 1], 5: [10, 5] },
};
const FL_SUITS = ["rock", "paper", "scissors", "lizard", "water"];
const FL_RANKS = ["a", "2", "3", "4", "5", "6", "7", "8", "9", "10", "j", "q", "k"];

function frontLineDeck(jokers, prefix = "") {
  const ids = FL_SUITS.flatMap((s) => FL_RANKS.map((r) => `${s}-${r}`));
  return (jokers ? [...ids, ...FL_SUITS.map((s) => `joker-${s}`)] : ids).map((id) => prefix + id);
}

class Undealable extends Error {}

function need(ok, what) {
  if (!ok) throw new Undealable(what);
}

const strList = (v) => Array.isArray(v) && v.every(isStr);
const option = (options, name, fallback) => {
  const v = get(options, name);
  return v === MISSING ? fallback : v;
};

/**
 * What the setup event must hold, from the seed's generator (or the fixed deal): a list of
 * [path in the envelope, value], and the setup event's type. `deal` is the fixed deal or null.
 */
export async function expectedDeal(game, nSeats, options, rng, deal) {
  const dealer = DEALERS[game];
  need(dealer !== undefined, `${JSON.stringify(game)} is not one of the five games`);
  return dealer(nSeats, options, rng, deal);
}

const DEALERS = {
  "san-ban": async (n, options, rng, deal) => {
    const out = [];
    let decks = null;
    let first = option(options, "first", "coin");
    if (deal !== null) {
      const raw = get(deal, "decks");
      need(Array.isArray(raw) && raw.length === 2 && raw.every(Array.isArray), "a San Ban deal's decks");
      decks = raw.map((d) => d.map((c) => (isMap(c) ? get(c, "id") : c)));
      first = option(deal, "first", first);
    } else if (option(options, "deck", null) === null && option(options, "decks", null) === null) {
      const tier = option(options, "tier", 2n);
      need(isInt(tier) && tier >= 1n && tier <= 5n, "San Ban's tier is 1 to 5");
      const ids = await rng.sample(SAN_BAN_TIER(Number(tier)), 10);
      decks = [ids.slice(0, 5), ids.slice(5)];
    }
    if (decks !== null) {
      decks.forEach((d, s) => out.push([["private", String(s), "deck"], d]));
      out.push([["data", "deck_sizes"], decks.map((d) => BigInt(d.length))]);
    }
    out.push([["data", "first"], first]);
    const hidden = new Map();
    if (first === "coin") hidden.set("coin_winner", BigInt(await rng.below(2)));
    if (option(options, "mode", "standard") === "advanced" && deal === null) {
      hidden.set("shuffles", [await rng.shuffled(range(5)), await rng.shuffled(range(5))].map((p) => p.map(BigInt)));
    }
    out.push([["private", "hidden"], hidden.size ? hidden : MISSING]);
    return { type: "decks_dealt", fields: out };
  },

  "nin-nal": async (n, options, rng, deal) => {
    let piles, hands, unused;
    if (deal !== null) {
      piles = get(deal, "piles");
      hands = get(deal, "hands");
      need(strList(piles) && Array.isArray(hands) && hands.every(strList), "a Nin Nal deal's piles and hands");
      const used = new Set([...piles, ...hands.flat()]);
      unused = NIN_NAL_CARDS.filter((c) => !used.has(c));
    } else {
      const deck = await rng.shuffled(NIN_NAL_CARDS);
      piles = deck.slice(0, 3);
      hands = range(n).map((s) => deck.slice(3 + 9 * s, 12 + 9 * s));
      unused = deck.slice(3 + 9 * n);
    }
    return {
      type: "cards_dealt",
      fields: [
        [["data", "piles"], piles],
        [["data", "hand_sizes"], hands.map((h) => BigInt(h.length))],
        ...hands.map((h, s) => [["private", String(s), "hand"], h]),
        [["private", "hidden", "unused"], unused],
      ],
    };
  },

  "kiri-ai": async (n, options, rng, deal) => {
    let specials;
    if (deal !== null) {
      const given = get(deal, "specials");
      need(strList(given) && given.length === 2, "a Kiri-ai deal's specials");
      specials = [...given, KIRI_AI_SPECIALS.find((s) => !given.includes(s))];
    } else {
      specials = await rng.shuffled(KIRI_AI_SPECIALS);
    }
    return {
      type: "specials_dealt",
      fields: [
        [["private", "0", "special"], specials[0]],
        [["private", "1", "special"], specials[1]],
        [["private", "hidden", "set_aside"], specials[2] ?? MISSING],
      ],
    };
  },

  "san-ni-ichi": async (n, options, rng, deal) => {
    const size = SNI_DECKS[option(options, "deck", "standard")]?.[n];
    need(size !== undefined, "a San, Ni, Ichi! deck for this number of players");
    const [top, count] = size;
    let weapons, hands;
    if (deal !== null) {
      const given = get(deal, "weapons");
      hands = get(deal, "hands");
      need(strList(given) && Array.isArray(hands) && hands.every(strList), "a San, Ni, Ichi! deal");
      weapons = SNI_WEAPONS.filter((w) => given.includes(w));
    } else {
      const drawn = await rng.sample(SNI_WEAPONS, count);
      weapons = SNI_WEAPONS.filter((w) => drawn.includes(w));
      const deck = ["fire", "water", "wood"].flatMap((e) => range(top).map((i) => `${e}-${i + 1}`));
      const cards = await rng.shuffled([...deck, ...weapons]);
      hands = range(n).map((s) => cards.slice(7 * s, 7 * s + 7));
    }
    return {
      type: "cards_dealt",
      fields: [
        [["data", "strengths"], BigInt(top)],
        [["data", "weapons_in_play"], weapons],
        [["data", "weapons_out"], SNI_WEAPONS.filter((w) => !weapons.includes(w))],
        [["data", "hand_sizes"], hands.map((h) => BigInt(h.length))],
        ...hands.map((h, s) => [["private", String(s), "hand"], h]),
      ],
    };
  },

  "front-line": async (n, options, rng, deal) => {
    const kind = option(options, "deck", "shared");
    const jokers = option(options, "jokers", false);
    need((kind === "shared" || kind === "per-player") && typeof jokers === "boolean", "Front Line's deck options");
    const decks = kind === "shared" ? [frontLineDeck(jokers)] : range(n).map((s) => frontLineDeck(jokers, `s${s}:`));
    let piles, setAside;
    if (deal !== null) {
      piles = get(deal, "piles");
      need(Array.isArray(piles) && piles.every(strList), "a Front Line deal's piles");
      const used = new Set(piles.flat());
      setAside = decks.flat().filter((c) => !used.has(c));
    } else if (kind === "per-player") {
      piles = [];
      for (const d of decks) piles.push(await rng.shuffled(d));
      setAside = [];
    } else {
      const cards = await rng.shuffled(decks[0]);
      const each = Math.floor(cards.length / n);
      piles = range(n).map((s) => cards.slice(s * each, (s + 1) * each));
      setAside = cards.slice(n * each);
    }
    return {
      type: "cards_dealt",
      fields: [
        [["data", "front"], piles.map((p) => p.slice(0, 3))],
        [["data", "reinforcements"], piles.map((p) => p.slice(3, 6))],
        [["data", "draw_sizes"], piles.map((p) => BigInt(p.slice(6).length))],
        [["data", "set_aside"], BigInt(setAside.length)],
        [["private", "hidden", "draw"], piles.map((p) => p.slice(6))],
        [["private", "hidden", "set_aside"], setAside],
      ],
    };
  },
};

// ---------------------------------------------------------------- checks: the frame

class Failure extends Error {
  constructor(detail, seq = null, field = null) {
    super(detail);
    this.seq = seq;
    this.field = field;
  }
}

/** A record's shape went wrong where a check did not look for it: failed, tied to no event. */
class Malformed extends Error {}

async function runCheck(name, check, ...args) {
  try {
    return { name, ok: true, detail: await check(...args), seq: null };
  } catch (err) {
    if (err instanceof Failure) return { name, ok: false, detail: err.message, seq: err.seq, field: err.field };
    if (err instanceof Malformed) return { name, ok: false, detail: `malformed record: ${err.message}`, seq: null };
    throw err;
  }
}

/** `fn()`, with anything a malformed value makes it throw turned into a Failure at `pos`. */
function atEvent(pos, what, fn) {
  try {
    return fn();
  } catch (err) {
    if (err instanceof Failure) throw err;
    throw new Failure(`event ${pos}: malformed ${what}: ${err.message}`, pos);
  }
}

/** `m[key]` as Python's `m[key]`: a KeyError (thrown) when absent or when `m` is no object. */
function at(m, key) {
  if (!isMap(m)) throw new Malformed(`${typeof m} is not an object`);
  if (!m.has(key)) throw new Malformed(`no key ${JSON.stringify(key)}`);
  return m.get(key);
}

/** Python's iteration of a JSON value: a list's items, a string's characters, an object's keys. */
function pyIter(v) {
  if (Array.isArray(v)) return v;
  if (isStr(v)) return [...v];
  if (isMap(v)) return [...v.keys()];
  throw new Malformed("not iterable");
}

const isCurrent = (env) => env.get("v") === 2n;
const isSealed = (events) => events.length > 0 && get(events.at(-1), "type") === "game_sealed";

// ---------------------------------------------------------------- format

const CURRENT_KEYS = ["v", "seq", "type", "data", "private_commitments", "at", "prev", "hash", "private", "private_salts"];
const OLD_KEYS = ["seq", "type", "data", "at", "prev", "hash"];

function checkFormat(record) {
  const events = get(record, "events");
  if (!Array.isArray(events) || events.length === 0) {
    throw new Failure("a record is a JSON object with a non-empty list 'events'");
  }
  const format = get(record, "format");
  if (format !== RECORD_FORMAT && format !== OLD_RECORD_FORMAT) {
    throw new Failure(`unknown record format ${pyRepr(format === MISSING ? null : format)}`, 1, "format");
  }
  let old = 0;
  events.forEach((env, i) => {
    const pos = i + 1;
    if (!checkEnvelope(env, pos)) {
      old++;
      if (old !== pos) throw new Failure(`event ${pos} is in format 1 after events in format 2`, pos);
    } else if (format !== RECORD_FORMAT) {
      throw new Failure(`event ${pos}: a format-2 envelope does not belong in a ${format} record`, 1, "format");
    }
  });
  const count = `${events.length} events`;
  if (format === OLD_RECORD_FORMAT) return `${count}, old format ${OLD_RECORD_FORMAT}: its hashes covered the private parts in the clear`;
  return old ? `${count}, ${RECORD_FORMAT}; the first ${old} in format 1` : `${count}, ${RECORD_FORMAT}`;
}

/** Exactly an envelope's keys with exact types; true for format 2, false for format 1. */
function checkEnvelope(env, pos) {
  if (!isMap(env)) throw new Failure(`event ${pos} is not an object`, pos);
  const current = env.has("v");
  const required = current ? CURRENT_KEYS : OLD_KEYS;
  const allowed = current ? required : [...required, "private"];
  const missing = required.filter((k) => !env.has(k));
  const unknown = [...env.keys()].filter((k) => !allowed.includes(k));
  if (missing.length || unknown.length) {
    throw new Failure(`event ${pos}: missing key(s) [${missing}], unknown key(s) [${unknown}]`, pos);
  }
  if (current && env.get("v") !== 2n) throw new Failure(`event ${pos}: envelope version is not the integer 2`, pos);
  if (!isInt(env.get("seq")) || !isStr(env.get("type")) || !isStr(env.get("at"))) {
    throw new Failure(`event ${pos}: seq must be an integer, type and at strings`, pos);
  }
  if (!isMap(env.get("data"))) throw new Failure(`event ${pos}: data must be an object`, pos);
  if (!["prev", "hash"].every((k) => isStr(env.get(k)) && HEX64.test(env.get(k)))) {
    throw new Failure(`event ${pos}: prev and hash must be 64 lowercase hex digits`, pos);
  }
  const priv = env.has("private") ? env.get("private") : new Map();
  if (!isMap(priv) || ![...priv.values()].every(isMap)) {
    throw new Failure(`event ${pos}: private must be an object of objects`, pos);
  }
  for (const key of current ? ["private_commitments", "private_salts"] : []) {
    const value = env.get(key);
    if (!isMap(value) || ![...value.values()].every(isStr)) {
      throw new Failure(`event ${pos}: ${key} must be an object of strings`, pos);
    }
  }
  return current;
}

// ---------------------------------------------------------------- hash chain

function hashedBody(env) {
  if (isCurrent(env)) {
    return obj({ v: 2n, seq: env.get("seq"), type: env.get("type"), data: env.get("data"),
      private_commitments: env.get("private_commitments"), at: env.get("at") });
  }
  return obj({ seq: env.get("seq"), type: env.get("type"), data: env.get("data"),
    private: env.get("private") ?? new Map(), at: env.get("at") });
}

/** hash = SHA-256(ascii(prev) || canonical_json(body)). */
export async function chainHash(prev, body) {
  return sha256Hex(concat(UTF8.encode(prev), canonicalJSON(body)));
}

async function checkChain(events) {
  const digests = await Promise.all(events.map((env) => chainHash(env.get("prev"), hashedBody(env))));
  let prev = GENESIS;
  events.forEach((env, i) => {
    const pos = i + 1;
    if (env.get("seq") !== BigInt(pos)) {
      throw new Failure(`event ${pos}: seq is ${env.get("seq")}, expected ${pos} (an event was dropped, added or moved)`, pos);
    }
    if (env.get("prev") !== prev) throw new Failure(`event ${pos}: prev does not match the hash of event ${pos - 1}`, pos);
    if (env.get("hash") !== digests[i]) throw new Failure(`event ${pos}: hash does not match its content`, pos);
    prev = digests[i];
  });
  return `${events.length} events chained; head ${prev}`;
}

// ---------------------------------------------------------------- header

const FROM_CREATION = ["format", "game_id", "game", "rules_version", "engine_version", "options", "seats", "seed_hash"];

/** Every header field as the events give it (docs/record-format.md, "The record"). */
function recordHeader(events) {
  const created = events[0].get("data");
  const sealed = isSealed(events);
  const seats = pyIter(at(created, "seats")).map((s) => {
    if (!isMap(s)) throw new Malformed("a seat is not an object");
    const bot = get(s, "bot");
    const settings = get(s, "bot_settings");
    const info = bot !== MISSING && truthy(bot)
      ? obj({
        name: bot,
        version: `${pyStr(at(created, "game"))}/${pyStr(at(created, "rules_version"))}`,
        settings: settings === MISSING ? new Map() : settings,
      })
      : null;
    return new Map([...s, ["bot_info", info]]);
  });
  const header = obj({
    format: events.some(isCurrent) ? RECORD_FORMAT : OLD_RECORD_FORMAT,
    game_id: at(created, "game_id"),
    game: at(created, "game"),
    rules_version: at(created, "rules_version"),
    engine_version: at(created, "engine_version"),
    options: at(created, "options"),
    seats,
    seed_hash: at(created, "seed_hash"),
    seed: sealed ? get(events.at(-1).get("data"), "seed") : null,
    complete: sealed,
    head: events.at(-1).get("hash"),
  });
  if (!sealed) header.set("note", IN_PROGRESS_NOTE);
  return header;
}

const ATTESTATIONS = ["signature", "inclusion"];

function checkHeader(record) {
  const events = record.get("events");
  if (events[0].get("type") !== "game_created") throw new Failure(`event 1 is not game_created`, 1);
  let derived;
  try {
    derived = recordHeader(events);
  } catch (err) {
    throw new Failure(`event 1 is not a well-formed game_created: ${err.message}`, 1);
  }
  const known = new Set([...derived.keys(), "events", "note", ...ATTESTATIONS]);
  const unknown = [...record.keys()].filter((k) => !known.has(k)).sort(byCodePoint);
  if (unknown.length) {
    throw new Failure(`unknown record field(s) [${unknown}]: a record holds only copies of what its events commit to`, null, unknown[0]);
  }
  const names = [...derived.keys(), ...(derived.has("note") ? [] : ["note"])];
  for (const name of names) {
    const want = get(derived, name);
    if (record.has(name) && !same(record.get(name), want)) {
      const [where, expected] = firstDifference(want, record.get(name), name);
      const bound = FROM_CREATION.includes(name) ? 1 : events.length;
      throw new Failure(`record field ${where} differs from what the events give (${short(expected)})`, bound, where);
    }
  }
  return "every field matches what the events commit to (event 1, the head, the seal)";
}

/** The first place two JSON values differ, as a path (`seats[1].bot_info.version`), and the wanted value. */
export function firstDifference(want, got, path = "") {
  if (isMap(want) && isMap(got)) {
    const keys = [...new Set([...want.keys(), ...got.keys()])].sort(byCodePoint);
    for (const key of keys) {
      const a = get(want, key);
      const b = get(got, key);
      if (!same(a, b)) return firstDifference(a, b, path ? `${path}.${key}` : key);
    }
  }
  if (Array.isArray(want) && Array.isArray(got)) {
    for (let i = 0; i < Math.max(want.length, got.length); i++) {
      const a = i < want.length ? want[i] : MISSING;
      const b = i < got.length ? got[i] : MISSING;
      if (!same(a, b)) return firstDifference(a, b, `${path}[${i}]`);
    }
  }
  return [path || "the event", want, got];
}

function short(v) {
  if (v === MISSING) return "absent";
  const text = canonicalText(v);
  return text.length <= 80 ? text : text.slice(0, 77) + "...";
}

// ---------------------------------------------------------------- private parts

/** SHA-256(canonical_json({"audience", "part", "salt"})). */
export function partCommitment(audience, part, salt) {
  return sha256Hex(canonicalJSON(obj({ audience, part, salt })));
}

async function checkPrivateParts(events, sealed) {
  const judged = [];
  for (const [i, env] of events.entries()) {
    if (!isCurrent(env)) continue;
    const parts = partsToCheck(env, i + 1, sealed);
    judged.push(parts);
    if (parts.failure) break; // nothing after it can be named first
  }
  let checked = 0;
  let withheld = 0;
  for (const parts of judged) {
    const digests = await Promise.all(parts.shown.map(([, , digest]) => digest));
    const wrong = parts.shown.find(([, committed], k) => digests[k] !== committed);
    if (wrong) throw new Failure(`event ${parts.pos}: the private part for ${wrong[0]} does not match its commitment`, parts.pos);
    if (parts.failure) throw parts.failure;
    checked += parts.shown.length;
    withheld += parts.withheld;
  }
  return `${checked} private parts match their commitments` + (withheld ? `; ${withheld} withheld while the game runs` : "");
}

/** One envelope's parts: those to hash against their commitments, how many are withheld, or what is wrong. */
function partsToCheck(env, pos, sealed) {
  const commitments = env.get("private_commitments");
  const parts = env.get("private");
  const salts = env.get("private_salts");
  const out = { pos, shown: [], withheld: 0, failure: null };
  if ([...parts.keys(), ...salts.keys()].some((a) => !commitments.has(a))) {
    out.failure = new Failure(`event ${pos}: a private part has no commitment`, pos);
    return out;
  }
  for (const [audience, committed] of commitments) {
    if (!sealed && !parts.has(audience) && !salts.has(audience)) {
      out.withheld++;
    } else if (!parts.has(audience) || !salts.has(audience)) {
      out.failure = new Failure(`event ${pos}: the private part for ${audience} or its salt is not in the record`, pos);
      return out;
    } else if (!SALT.test(salts.get(audience))) {
      out.failure = new Failure(`event ${pos}: the salt of ${audience} is not 128 bits as 32 lowercase hex digits`, pos);
      return out;
    } else {
      out.shown.push([audience, committed, partCommitment(audience, parts.get(audience), salts.get(audience))]);
    }
  }
  return out;
}

// ---------------------------------------------------------------- seed

async function seedMatches(seed, published) {
  return isStr(seed) && LOWER_HEX.test(seed) && (await sha256Hex(fromHex(seed))) === published;
}

async function checkSeed(events) {
  const index = events.findIndex((e) => e.get("type") === "game_sealed");
  if (index < 0) return "not published: the game is in progress";
  const pos = index + 1;
  const data = events[index].get("data");
  if (data.size !== 2 || !data.has("seed") || !data.has("head")) {
    throw new Failure("game_sealed must hold exactly the seed and the head hash", pos);
  }
  const seed = data.get("seed");
  if (!isStr(seed) || !LOWER_HEX.test(seed)) throw new Failure("the published seed is not lowercase hex", pos);
  if (!(await seedMatches(seed, get(events[0].get("data"), "seed_hash")))) {
    throw new Failure("sha256(seed) differs from the seed_hash published in event 1", pos);
  }
  if (pos < 2 || data.get("head") !== events[pos - 2].get("hash")) {
    throw new Failure("game_sealed does not carry the head hash before it", pos);
  }
  if (pos !== events.length) throw new Failure(`event ${pos + 1} follows game_sealed, after which nothing may be appended`, pos + 1);
  return "seed matches its published hash";
}

// ---------------------------------------------------------------- secret choices

/** SHA-256(canonical_json({"game", "seat", "step", "part", "action", "salt"})). */
export function choiceCommitment(game, seat, step, part, action, salt) {
  return sha256Hex(canonicalJSON(obj({ game, seat, step, part, action, salt })));
}

async function checkCommitments(events, sealed) {
  const gameId = get(events[0].get("data"), "game_id");
  const game = gameId === MISSING ? null : gameId;
  const committed = new Map();
  const reveals = []; // [pos, seat, digest, the committed hash], in the record's order
  let failure = null;
  let withheld = 0;
  for (const [i, env] of events.entries()) {
    try {
      withheld += collectChoices(env, i + 1, sealed, committed, (pos, seat, opened) =>
        reveals.push([pos, seat, choiceCommitment(game, seat, ...opened.args), opened.hash]));
    } catch (err) {
      if (!(err instanceof Failure)) throw err;
      failure = err;
      break; // nothing after it can be named first
    }
  }
  const digests = await Promise.all(reveals.map(([, , digest]) => digest));
  const wrong = reveals.findIndex(([, , , hash], k) => digests[k] !== hash);
  if (wrong >= 0) {
    const [pos, seat] = reveals[wrong];
    throw new Failure(`event ${pos}: seat ${seat}'s revealed choice does not match its commitment`, pos);
  }
  if (failure) throw failure;
  return `${reveals.length} revealed choices match their commitments` + (withheld ? `; ${withheld} private reveals withheld while the game runs` : "");
}

/** One event's part in the choices: a commitment noted, or each revealed choice handed to `reveal`;
 * 1 for a private reveal withheld while the game runs, else 0. */
function collectChoices(env, pos, sealed, committed, reveal) {
  const type = env.get("type");
  return atEvent(pos, type, () => {
    if (type === "choice_committed") {
      const data = env.get("data");
      const [step, seat, hashes] = [at(data, "step"), at(data, "seat"), at(data, "commitments")];
      if (!isInt(step) || !isInt(seat) || !Array.isArray(hashes)) {
        throw new Failure(`event ${pos}: step and seat must be integers, commitments a list`, pos);
      }
      committed.set(`${step},${seat}`, hashes);
    } else if (type === "choices_revealed") {
      const shown = revealed(env, pos, sealed);
      if (shown === null) return 1;
      for (const [seat, choice] of shown) reveal(pos, seat, revealCheck(env.get("data"), committed, seat, choice, pos));
    }
    return 0;
  });
}

/** A reveal's checks before hashing: the commitment it opens, and what to hash. */
function revealCheck(data, committed, seat, shown, pos) {
  const step = at(data, "step");
  const part = at(data, "part");
  const hashes = isInt(step) ? committed.get(`${step},${seat}`) : undefined;
  if (hashes === undefined || !isInt(part) || part < 0n || part >= BigInt(hashes.length)) {
    throw new Failure(`event ${pos}: seat ${seat} revealed a choice it never committed`, pos);
  }
  const salt = at(shown, "salt");
  if (!isStr(salt) || !SALT.test(salt)) {
    throw new Failure(`event ${pos}: seat ${seat}'s salt is not 128 bits as 32 lowercase hex digits`, pos);
  }
  return { args: [step, part, at(shown, "action"), salt], hash: hashes[Number(part)] };
}

/** The choices a reveal shows, as [seat, choice] pairs; null for a private reveal withheld while the game runs. */
function revealed(env, pos, sealed) {
  const data = env.get("data");
  if (data.has("choices")) {
    const choices = data.get("choices");
    if (!isMap(choices)) throw new Malformed("choices is not an object");
    return dedupe([...choices].map(([s, v]) => [seatNumber(s, pos), v]));
  }
  const priv = env.get("private") ?? new Map();
  const seats = pyIter(at(data, "seats")).map(pyStr);
  const missing = seats.filter((s) => !priv.has(s));
  if (missing.length && !sealed && missing.length === seats.length) return null;
  if (missing.length) throw new Failure(`event ${pos}: private reveal of seat(s) ${missing} is not in the record`, pos);
  return dedupe(seats.map((s) => [seatNumber(s, pos), priv.get(s)]));
}

function dedupe(pairs) {
  return [...new Map(pairs.map(([s, v]) => [s.toString(), [s, v]])).values()];
}

function seatNumber(key, pos) {
  if (!SEAT_KEY.test(key)) throw new Failure(`event ${pos}: ${JSON.stringify(key)} is not a seat number`, pos);
  return BigInt(key);
}

// ---------------------------------------------------------------- the deal

async function checkDeal(events) {
  const created = events[0].get("data");
  const seed = events.at(-1).get("data").get("seed");
  if (!(await seedMatches(seed, get(created, "seed_hash")))) {
    return "not dealt: no seed that matches seed_hash (the seed check says why)";
  }
  let expected;
  try {
    const fixed = fixedDeal(events[0]);
    const seats = at(created, "seats");
    if (!Array.isArray(seats)) throw new Undealable("seats is not a list");
    const rng = await SeededRandom.create(fromHex(seed));
    expected = await expectedDeal(get(created, "game"), seats.length, get(created, "options"), rng, fixed);
  } catch (err) {
    if (err instanceof Undealable || err instanceof Malformed) throw new Failure(`the opening cannot be dealt: ${err.message}`, 1);
    throw err;
  }
  const env = events[1];
  if (env === undefined || env.get("type") !== expected.type) {
    throw new Failure(`event 2: the seed deals ${expected.type}, the record has ${env ? env.get("type") : "nothing"}`, 2);
  }
  for (const [path, want] of expected.fields) {
    const got = path.reduce((v, key) => get(v, key), env);
    if (!same(want, got)) {
      throw new Failure(`event 2: ${path.join(".")} should be ${short(want)}, the record has ${short(got)}`, 2);
    }
  }
  return fixedDeal(events[0]) === null ? "the deal is what the seed deals" : "the deal is the fixed deal's";
}

/** The fixed deal event 1 keeps in its hidden part, or null. */
function fixedDeal(created) {
  const hidden = get(created.get("private") ?? new Map(), "hidden");
  if (hidden === MISSING) return null;
  const deal = get(hidden, "deal");
  if (deal === MISSING || deal === null) return null;
  if (!isMap(deal)) throw new Undealable("the fixed deal is not an object");
  return deal;
}

// ---------------------------------------------------------------- signatures and keys

const SIGNATURE_KEYS = ["kid", "alg", "statement", "sig"];

/** Why a signature is malformed (exactly its four members, EdDSA, a 64-byte sig), or null. */
function signatureShapeProblem(signature) {
  if (!isMap(signature) || signature.size !== 4 || !SIGNATURE_KEYS.every((k) => signature.has(k))) {
    return `a signature has exactly the members ${SIGNATURE_KEYS}`;
  }
  if (signature.get("alg") !== "EdDSA") return "alg is not EdDSA";
  if (!isStr(signature.get("kid")) || !isMap(signature.get("statement"))) return "kid is a string and statement an object";
  const sig = fromB64url(signature.get("sig"));
  if (sig === null || sig.length !== 64) return "sig is not 64 bytes of canonical unpadded base64url";
  return null;
}

/** RFC 7638 thumbprint of an Ed25519 JWK's `x`. */
export async function thumbprint(x) {
  return b64url(await sha256(canonicalJSON(obj({ crv: "Ed25519", kty: "OKP", x }))));
}

/** RFC 3339 time in milliseconds since the epoch, or null. */
function parseTime(text) {
  const m = isStr(text) && /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return null;
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${(m[7] ?? "").slice(0, 4)}${m[8].toUpperCase()}`);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * Whether a key vouches for a statement made at `moment`: up to its valid_until + 10 minutes (always,
 * while it has none). valid_from is information only (docs/record-format.md, "Keys").
 */
export function validAt(jwk, moment) {
  const when = parseTime(moment);
  const until = parseTime(get(jwk, "valid_until"));
  if (when === null) return false;
  return until === null || when <= until + ROTATION_GRACE_MS;
}

/**
 * Check `signature` against the key set `keys` (a parsed JWK set: Maps, or plain objects from
 * JSON.parse); throws an Error saying what is wrong, or returns the key (a Map).
 */
export async function checkSignature(signature, keys) {
  const problem = signatureShapeProblem(signature);
  if (problem) throw new Error(problem);
  const kid = signature.get("kid");
  const set = get(toJSONValue(keys), "keys");
  const jwk = (Array.isArray(set) ? set : []).find((k) => get(k, "kid") === kid);
  if (jwk === undefined) throw new Error(`signed by key ${kid}, which is not among the keys given`);
  if (get(jwk, "kty") !== "OKP" || get(jwk, "crv") !== "Ed25519") throw new Error(`key ${kid} is not an Ed25519 key`);
  const raw = fromB64url(get(jwk, "x"));
  if (raw === null || raw.length !== 32 || (await thumbprint(get(jwk, "x"))) !== kid) {
    throw new Error(`key ${kid}: its kid is not the thumbprint of its x`);
  }
  const key = await subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
  const ok = await subtle.verify({ name: "Ed25519" }, key, fromB64url(signature.get("sig")), canonicalJSON(signature.get("statement")));
  if (!ok) throw new Error(`the signature is not key ${kid}'s over its statement`);
  return jwk;
}

/** A value from JSON.parse (plain objects, numbers) as this module's values (Maps, BigInt integers). */
export function toJSONValue(v) {
  if (v === undefined || v === null || v instanceof Map || typeof v !== "object") {
    return typeof v === "number" && Number.isInteger(v) ? BigInt(v) : v ?? null;
  }
  if (Array.isArray(v)) return v.map(toJSONValue);
  return new Map(Object.entries(v).map(([k, x]) => [k, toJSONValue(x)]));
}

function sealedStatement(events) {
  const last = events.at(-1);
  const gameId = get(events[0].get("data"), "game_id");
  return obj({ kind: SEALED_GAME, game: gameId === MISSING ? null : gameId, version: BigInt(events.length),
    hash: last.get("hash"), sealed_at: last.get("at") });
}

async function checkRecordSignature(record, events, keys) {
  const pos = events.length;
  const signature = get(record, "signature");
  if (signature === MISSING) {
    if (record.has("inclusion")) throw new Failure("an inclusion proof, but no signature to prove", pos, "inclusion");
    if (keys) throw new Failure("the record is not signed, and keys were given", pos, "signature");
    return "none: an unsigned record (an older one)";
  }
  if (!isSealed(events)) throw new Failure("only a sealed record carries a signature", pos, "signature");
  const problem = signatureShapeProblem(signature);
  if (problem) throw new Failure(`signature: ${problem}`, pos, "signature");
  const want = sealedStatement(events);
  if (!same(signature.get("statement"), want)) {
    const [where, expected] = firstDifference(want, signature.get("statement"), "signature.statement");
    throw new Failure(`${where} should be ${short(expected)} (the end of the log)`, pos, where);
  }
  if (!keys) return "the statement is this game's end; the signature is NOT CHECKED (no keys)";
  let jwk;
  try {
    jwk = await checkSignature(signature, keys);
  } catch (err) {
    throw new Failure(err.message, pos, "signature");
  }
  if (!validAt(jwk, want.get("sealed_at"))) {
    throw new Failure(`key ${signature.get("kid")} was not valid when the game was sealed`, pos, "signature");
  }
  return `signed by key ${signature.get("kid")}, valid when the game was sealed`;
}

// ---------------------------------------------------------------- the transparency log (RFC 9162)

const LEAF_PREFIX = Uint8Array.of(0);
const NODE_PREFIX = Uint8Array.of(1);

export function leafHash(leaf) {
  return sha256(concat(LEAF_PREFIX, leaf));
}

export function nodeHash(left, right) {
  return sha256(concat(NODE_PREFIX, left, right));
}

const splitSize = (n) => 2 ** Math.floor(Math.log2(n - 1));

/** MTH of a list of leaf hashes (for tests and for rebuilding a small tree). */
export async function merkleRoot(leafHashes) {
  if (leafHashes.length === 0) return sha256(new Uint8Array(0));
  if (leafHashes.length === 1) return leafHashes[0];
  const k = splitSize(leafHashes.length);
  return nodeHash(await merkleRoot(leafHashes.slice(0, k)), await merkleRoot(leafHashes.slice(k)));
}

const sameBytes = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const asBytes = (h) => (isStr(h) ? fromHex(h) : h);

/** RFC 9162 2.1.3.2: whether `path` proves the leaf hash at `index` in the tree of `size` with `root`. */
export async function verifyInclusion({ leafHash: leaf, index, size, path, root }) {
  [index, size] = [Number(index), Number(size)];
  if (!(index >= 0 && index < size)) return false;
  let fn = index;
  let sn = size - 1;
  let r = asBytes(leaf);
  for (const p of path.map(asBytes)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else {
      r = await nodeHash(r, p);
    }
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 && sameBytes(r, asBytes(root));
}

/** RFC 9162 2.1.4.2: whether `path` proves the tree of `second` extends the tree of `first`. */
export async function verifyConsistency({ first, second, firstRoot, secondRoot, path }) {
  [first, second] = [Number(first), Number(second)];
  const [r1, r2] = [asBytes(firstRoot), asBytes(secondRoot)];
  if (!(first >= 0 && first <= second)) return false;
  if (first === 0) return path.length === 0 && sameBytes(r1, await sha256(new Uint8Array(0)));
  if (first === second) return path.length === 0 && sameBytes(r1, r2);
  if (path.length === 0) return false;
  const nodes = path.map(asBytes);
  if ((first & (first - 1)) === 0) nodes.unshift(r1);
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) [fn, sn] = [(fn - 1) / 2, Math.floor(sn / 2)];
  let fr = nodes[0];
  let sr = nodes[0];
  for (const c of nodes.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      [fr, sr] = [await nodeHash(c, fr), await nodeHash(c, sr)];
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else {
      sr = await nodeHash(sr, c);
    }
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sameBytes(fr, r1) && sameBytes(sr, r2) && sn === 0;
}

const isSize = (v) => isInt(v) && v >= 0n && v < 2n ** 53n;
const isHexList = (v) => Array.isArray(v) && v.every((h) => isStr(h) && HEX64.test(h));

/**
 * A signed tree head `{"size", "root", "signature"}` (a Map, or a plain object from JSON.parse):
 * its statement is `{"kind": "kifu-log-head/1", "size", "root"}` of this head and, given keys, the
 * head's signature holds. Returns a problem (a string), or null when the head holds.
 */
export async function verifyLogHead(head, keys) {
  head = toJSONValue(head);
  const exactKeys = isMap(head) && head.size === 3 && ["size", "root", "signature"].every((k) => head.has(k));
  if (!exactKeys || !isSize(get(head, "size")) || !isStr(get(head, "root")) || !HEX64.test(head.get("root"))) {
    return "a tree head is exactly {size, root, signature} with an integer size and a 64-hex root";
  }
  const signature = get(head, "signature");
  const problem = signatureShapeProblem(signature);
  if (problem) return `the head's signature: ${problem}`;
  const want = obj({ kind: LOG_HEAD, size: head.get("size"), root: head.get("root") });
  if (!same(signature.get("statement"), want)) return "the head's signed statement is not this head's";
  if (!keys) return null;
  try {
    await checkSignature(signature, keys);
  } catch (err) {
    return `the head's signature: ${err.message}`;
  }
  return null;
}

async function checkInclusion(record, events, keys) {
  const pos = events.length;
  const proof = get(record, "inclusion");
  const signature = get(record, "signature");
  const keysOk = isMap(proof) && proof.size === 4 && ["index", "size", "path", "head"].every((k) => proof.has(k));
  if (!keysOk || !isSize(proof.get("index")) || !isSize(proof.get("size")) || !isHexList(proof.get("path"))) {
    const shape = "inclusion is {index, size, path, head} with integer index and size and 64-hex path";
    throw new Failure(shape, pos, "inclusion");
  }
  // the leaf is the signed statement: the signature's other members are the signature check's business
  if (!isMap(signature) || !signature.has("statement")) {
    throw new Failure("inclusion proves a signature the record lacks", pos, "inclusion");
  }
  const head = proof.get("head");
  const shapeProblem = await verifyLogHead(head, undefined);
  if (shapeProblem) throw new Failure(shapeProblem, pos, "inclusion");
  if (!same(head.get("size"), proof.get("size"))) throw new Failure("the head's size is not the proof's", pos, "inclusion");
  const ok = await verifyInclusion({
    leafHash: await leafHash(canonicalJSON(signature.get("statement"))),
    index: proof.get("index"),
    size: proof.get("size"),
    path: proof.get("path"),
    root: head.get("root"),
  });
  if (!ok) throw new Failure("the audit path does not prove the signed statement in the head", pos, "inclusion");
  const signedProblem = keys ? await verifyLogHead(head, keys) : null;
  if (signedProblem) throw new Failure(signedProblem, pos, "inclusion.head.signature");
  const where = `leaf ${proof.get("index")} of ${proof.get("size")}`;
  return keys ? `${where}, the head signed` : `${where}; the head's signature NOT CHECKED (no keys)`;
}

// ---------------------------------------------------------------- the report

/** Verify one record given as JSON text (a string, or UTF-8 bytes); `keys` is a parsed JWK set or undefined. */
export async function verifyRecord(recordText, { keys } = {}) {
  let record;
  try {
    record = parseStrictJSON(recordText);
  } catch (err) {
    if (!(err instanceof StrictJSONError)) throw err;
    return notJSONReport(err.message);
  }
  return verifyParsed(record, keys);
}

function notJSONReport(why) {
  return {
    verified: false, verdict: "failed", sealed: false, format: null,
    checks: [{ name: "json", ok: false, detail: `not JSON (${why})`, seq: null }],
    head: null, first_bad_event: null, bad_field: null, signed: "unsigned", logged: "absent",
  };
}

/** Every check on a parsed record, and the verdict. */
export async function verifyParsed(record, keys) {
  const checks = [await runCheck("format", checkFormat, record)];
  let sealed = false;
  const formatOk = checks[0].ok;
  const events = formatOk ? record.get("events") : [];
  if (formatOk) {
    sealed = isSealed(events);
    checks.push(
      ...(await Promise.all([
        runCheck("hash_chain", checkChain, events),
        runCheck("header", checkHeader, record),
        runCheck("private_parts", checkPrivateParts, events, sealed),
        runCheck("seed", checkSeed, events),
        runCheck("commitments", checkCommitments, events, sealed),
        ...(sealed ? [runCheck("deal", checkDeal, events)] : []),
        ...(sealed || record.has("signature") ? [runCheck("signature", checkRecordSignature, record, events, keys)] : []),
        ...(record.has("inclusion") ? [runCheck("inclusion", checkInclusion, record, events, keys)] : []),
      ])),
    );
    if (!sealed) checks.push({ name: "sealed", ok: false, detail: IN_PROGRESS_DETAIL, seq: null });
  }
  const failed = checks.filter((c) => !c.ok && c.name !== "sealed");
  const bad = failed.map((c) => c.seq).filter((s) => s !== null && s !== undefined);
  const verdict = failed.length ? "failed" : sealed ? "verified" : "in_progress";
  return {
    verified: verdict === "verified",
    verdict,
    sealed,
    format: formatOk ? get(record, "format") : null,
    checks: checks.map(({ name, ok, detail, seq }) => ({ name, ok, detail, seq: seq ?? null })),
    head: formatOk ? events.at(-1).get("hash") : null,
    first_bad_event: bad.length ? Math.min(...bad) : null,
    bad_field: failed.find((c) => c.field)?.field ?? null,
    signed: !formatOk || !record.has("signature") ? "unsigned" : keys ? "checked" : "unchecked",
    logged: !formatOk || !record.has("inclusion") ? "absent" : keys ? "checked" : "unchecked",
  };
}

// ---------------------------------------------------------------- command line (Node only)

const VERDICT_LINES = {
  verified: ["VERIFIED", 0],
  in_progress: ["IN PROGRESS: chain and commitments valid, result not proven", 3],
  failed: ["NOT VERIFIED", 1],
};

function attestationLines(report, keys) {
  const check = (name) => report.checks.find((c) => c.name === name);
  const sig = check("signature");
  const incl = check("inclusion");
  const kid = sig && sig.ok && keys ? sig.detail.match(/key (\S+),/)[1] : null;
  const signature = report.signed === "unsigned" ? "signature: none (unsigned record)"
    : sig && !sig.ok ? "signature: FAILED"
      : keys ? `signature: checked against key ${kid}` : "signature: NOT CHECKED (no --keys given)";
  const leaf = incl && incl.ok ? incl.detail.match(/^leaf (\d+) of (\d+)/) : null;
  const inclusion = report.logged === "absent" ? "inclusion: none"
    : !incl.ok ? "inclusion: FAILED"
      : keys ? `inclusion: checked (leaf ${leaf[1]} of ${leaf[2]})` : "inclusion: proof valid, head signature NOT CHECKED (no --keys)";
  return [signature, inclusion];
}

function printReport(report, keys) {
  for (const c of report.checks) {
    const mark = c.ok ? "ok  " : c.name === "sealed" ? "----" : "FAIL";
    console.log(`${mark} ${c.name}: ${c.detail}`);
  }
  if (report.first_bad_event !== null) console.log(`first bad event: ${report.first_bad_event}`);
  for (const line of attestationLines(report, keys)) console.log(line);
  const [line, status] = VERDICT_LINES[report.verdict];
  console.log(`${line} head ${report.head ?? "None"}`);
  return status;
}

function batchLine(report) {
  return JSON.stringify({
    verdict: report.verdict,
    first_bad_event: report.first_bad_event,
    bad_field: report.bad_field,
    failed: report.checks.filter((c) => !c.ok && c.name !== "sealed").map((c) => c.name),
  });
}

/** NDJSON in, one JSON line out per line, in order; up to `window` records verified at once. */
async function runBatch(stdin, stdout, keys, window = 8) {
  const pending = [];
  const flush = async (limit) => {
    while (pending.length > limit) stdout.write(batchLine(await pending.shift()) + "\n");
  };
  let rest = Buffer.alloc(0);
  for await (const chunk of stdin) {
    rest = Buffer.concat([rest, chunk]);
    let nl;
    while ((nl = rest.indexOf(10)) >= 0) {
      pending.push(verifyRecord(rest.subarray(0, nl), { keys }));
      rest = rest.subarray(nl + 1);
      await flush(window);
    }
    await flush(0); // every whole line read so far is answered before waiting for more input
  }
  if (rest.length) pending.push(verifyRecord(rest, { keys }));
  await flush(0);
}

async function readKeys(fs, path) {
  return parseStrictJSON(await fs.readFile(path));
}

async function main(argv) {
  const fs = await import("node:fs/promises");
  const args = [...argv];
  const keysAt = args.indexOf("--keys");
  let keys;
  if (keysAt >= 0) {
    const [, path] = args.splice(keysAt, 2);
    try {
      keys = await readKeys(fs, path);
    } catch (err) {
      console.error(`usage: cannot read the key set ${path}: ${err.message}`);
      return 2;
    }
  }
  if (args[0] === "--batch" && args.length === 1) {
    await runBatch(process.stdin, process.stdout, keys);
    return 0;
  }
  if (args.length !== 1) {
    console.error("usage: node kifu-verify.mjs RECORD.json [--keys JWKS.json] | --batch [--keys JWKS.json]");
    return 2;
  }
  let bytes;
  try {
    bytes = await fs.readFile(args[0]);
  } catch (err) {
    console.error(`usage: no such file: ${args[0]} (${err.code})`);
    return 2;
  }
  return printReport(await verifyRecord(bytes, { keys }), keys);
}

async function startedAsScript() {
  if (typeof process === "undefined" || !process.argv?.[1]) return false;
  const { pathToFileURL } = await import("node:url");
  const { realpath } = await import("node:fs/promises");
  return import.meta.url === pathToFileURL(await realpath(process.argv[1])).href;
}

if (await startedAsScript()) {
  process.exitCode = await main(process.argv.slice(2));
}
