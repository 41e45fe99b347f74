/**
 * The worked vectors of docs/record-format.md and the generator vectors of docs/fairness.md, checked
 * against kifu-verify.mjs. Run: `node verifier/test-vectors.mjs` (exit 1 on any failure).
 */
import {
  SeededRandom, b64url, canonicalText, chainHash, checkSignature, choiceCommitment, expectedDeal, fromB64url,
  fromHex, leafHash, merkleRoot, parseStrictJSON, partCommitment, sha256Hex, thumbprint, toHex, toJSONValue,
  verifyConsistency, verifyInclusion, verifyLogHead,
} from "./kifu-verify.mjs";

let failures = 0;
let passed = 0;

function check(name, got, want) {
  const [g, w] = [canonicalText(toJSONValue(got)), canonicalText(toJSONValue(want))];
  if (g === w) {
    passed++;
  } else {
    failures++;
    console.log(`FAIL ${name}\n  got  ${g}\n  want ${w}`);
  }
}

const words = (text) => text.trim().split(/\s+/);
const S1 = fromHex("00".repeat(31) + "01");
const KIFU = new TextEncoder().encode("kifu");
const json = (text) => parseStrictJSON(text);

// ---------------------------------------------------------------- record-format.md: the envelope

async function envelopeVector() {
  const parts = { 0: ['{"hand":["rock-7"]}', "00112233445566778899aabbccddeeff"],
    hidden: ['{"unused":["paper-3"]}', "ffeeddccbbaa99887766554433221100"] };
  const commitments = {};
  for (const [audience, [part, salt]] of Object.entries(parts)) {
    commitments[audience] = await partCommitment(audience, json(part), salt);
  }
  check("commitment 0", commitments[0], "be791982534219246d8ff07c5900623b9e24589cc6125e11a64ce8b28397072b");
  check("commitment hidden", commitments.hidden, "65026b7eec14b79ecc5b29cfc0ddf214d109febc1b88a8b4dc8397b1639a8761");
  const body = json(JSON.stringify({ v: 2, seq: 1, type: "cards_dealt", data: { hand_sizes: [1, 1] },
    private_commitments: commitments, at: "2026-01-01T00:00:00.000Z" }));
  check("hashed body", canonicalText(body),
    '{"at":"2026-01-01T00:00:00.000Z","data":{"hand_sizes":[1,1]},"private_commitments":{"0":"be791982534219246d8ff07c5900623b9e24589cc6125e11a64ce8b28397072b","hidden":"65026b7eec14b79ecc5b29cfc0ddf214d109febc1b88a8b4dc8397b1639a8761"},"seq":1,"type":"cards_dealt","v":2}');
  check("envelope hash", await chainHash("0".repeat(64), body), "c9dc94990d7950a09c6e919da0db0d5bc88cef2769fcd633dacb26e5d1189e7f");
  const action = json('{"type": "select", "card": "rock-7"}');
  check("choice commitment", await choiceCommitment("g1", 0n, 0n, 0n, action, "00112233445566778899aabbccddeeff"),
    "ed7c9809c99b1a493acb64d07b7c28278998505ddb9a8e4e109d2003c94036ca");
}

// ---------------------------------------------------------------- record-format.md: signatures and the log

const SECRET = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const PUBLIC = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const JWK = { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
  kid: "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k", alg: "EdDSA", use: "sig" };
const KEYS = { keys: [{ ...JWK, status: "active", valid_from: "2026-01-01T00:00:00.000Z", valid_until: null }] };

async function sign(statementText) {
  const d = b64url(fromHex(SECRET));
  const key = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: JWK.x, d }, { name: "Ed25519" }, false, ["sign"]);
  const bytes = new TextEncoder().encode(canonicalText(json(statementText)));
  return b64url(new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, key, bytes)));
}

const gameStatement = (n, version, head, minute) =>
  `{"game":"g-vector-${n}","hash":"${head}","kind":"kifu-sealed-game/1","sealed_at":"2026-01-01T00:${minute}:00.000Z","version":${version}}`;

async function signatureVectors() {
  check("x", toHex(fromB64url(JWK.x)), PUBLIC);
  check("kid", await thumbprint(JWK.x), JWK.kid);
  const statement = gameStatement(1, 42, "c9dc94990d7950a09c6e919da0db0d5bc88cef2769fcd633dacb26e5d1189e7f", "10");
  check("signed bytes", canonicalText(json(statement)), statement);
  const sig = "iTNL5ofVY-BLqkuSZmzvk6Rl7BkHQDUfjXHDHXMReXoeIGsqemBa3q5Zcnn-OSEcpz69eJtERzXwSC-mqMzxDw";
  check("game signature", await sign(statement), sig);
  const signature = json(`{"kid":"${JWK.kid}","alg":"EdDSA","statement":${statement},"sig":"${sig}"}`);
  check("game signature verifies", (await checkSignature(signature, KEYS)).get("kid"), JWK.kid);
  signature.set("sig", sig.slice(0, -1) + "x"); // the last character's unused bits set: not canonical
  check("a non-canonical sig is refused", await checkSignature(signature, KEYS).then(() => "accepted", () => "refused"), "refused");
}

async function treeVectors() {
  const statements = [1, 2, 3].map((n) => gameStatement(n, 40 + n, String(n).repeat(64), String(10 + n)));
  check("leaf 0", statements[0],
    '{"game":"g-vector-1","hash":"1111111111111111111111111111111111111111111111111111111111111111","kind":"kifu-sealed-game/1","sealed_at":"2026-01-01T00:11:00.000Z","version":41}');
  const leaves = await Promise.all(statements.map((s) => leafHash(new TextEncoder().encode(s))));
  const L = ["f0c15c05c18c9ca3cdba9ea7c78b32fc315e1176035f4227921a204a4fa8f9a2",
    "b33b2d35eec337fb610b3769c46b6759c36c1784427142bea8dd64294f66806c",
    "4ca3927f5e90a5b71fb09a5ac61b217605c3e081fe01d58dd49152cd05e62b5b"];
  const R = [L[0], "3b7e4c0f9415437e025c30eedbaf842606b40ab9e8ef21d0846aadff444108ce",
    "21174eb97f532548b3a72ee2dbafb2b083555cf7e97d646150640db428834435"];
  check("leaf hashes", leaves.map(toHex), L);
  for (const size of [1, 2, 3]) check(`root ${size}`, toHex(await merkleRoot(leaves.slice(0, size))), R[size - 1]);
  check("empty root", toHex(await merkleRoot([])), await sha256Hex(new Uint8Array(0)));
  const proofs = {
    "inclusion 0 in 3": verifyInclusion({ leafHash: L[0], index: 0, size: 3, path: [L[1], L[2]], root: R[2] }),
    "inclusion 2 in 3": verifyInclusion({ leafHash: L[2], index: 2, size: 3, path: [R[1]], root: R[2] }),
    "inclusion 1 in 2": verifyInclusion({ leafHash: L[1], index: 1, size: 2, path: [L[0]], root: R[1] }),
    "consistency 1 to 3": verifyConsistency({ first: 1, second: 3, firstRoot: R[0], secondRoot: R[2], path: [L[1], L[2]] }),
    "consistency 2 to 3": verifyConsistency({ first: 2, second: 3, firstRoot: R[1], secondRoot: R[2], path: [L[2]] }),
    "consistency 3 to 3": verifyConsistency({ first: 3, second: 3, firstRoot: R[2], secondRoot: R[2], path: [] }),
  };
  for (const [name, ok] of Object.entries(proofs)) check(name, await ok, true);
  const wrong = {
    "inclusion, wrong index": verifyInclusion({ leafHash: L[0], index: 1, size: 3, path: [L[1], L[2]], root: R[2] }),
    "inclusion, short path": verifyInclusion({ leafHash: L[0], index: 0, size: 3, path: [L[1]], root: R[2] }),
    "consistency, wrong root": verifyConsistency({ first: 2, second: 3, firstRoot: R[0], secondRoot: R[2], path: [L[2]] }),
  };
  for (const [name, ok] of Object.entries(wrong)) check(name, await ok, false);
  const headStatement = `{"kind":"kifu-log-head/1","root":"${R[2]}","size":3}`;
  const headSig = "iU6M3BqVedyHNFT61EP7FjWPeoteP8OvLDNk4FvGuj82yXWzKE7mneS_ygzMr2QPrJzRswwPWTPwdbOtp0HgDA";
  check("head signature", await sign(headStatement), headSig);
  const head = { size: 3, root: R[2], signature: { kid: JWK.kid, alg: "EdDSA", statement: JSON.parse(headStatement), sig: headSig } };
  check("signed head", await verifyLogHead(head, KEYS), null);
  check("signed head, no keys", await verifyLogHead(head), null);
  check("head of another size", (await verifyLogHead({ ...head, size: 2 }, KEYS)) !== null, true);
}

// ---------------------------------------------------------------- fairness.md: the generator

async function generatorVectors() {
  check("sha256(S1)", await sha256Hex(S1), "ec4916dd28fc4c10d78e287ca5d9cc51ee1ae73cbfde08c6b37324cbfaac8bc5");
  let r = await SeededRandom.create(S1);
  check("first 8 bytes", toHex(await r.nextBytes(8)), "6b340be3d3342b0d");
  r = await SeededRandom.create(S1);
  check("blocks 0 and 1", toHex(await r.nextBytes(64)),
    "6b340be3d3342b0dde7a1fe0b56d5c2bab9a1dacb8786319711f679032ad5620" +
    "ff7551929cb336cc6c9af8bba1b9f547ab50660dd0609f94acc495c0e654ffff");
  r = await SeededRandom.create(S1);
  const belows = [];
  for (const n of [2, 6, 52, 1000, 300]) belows.push(await r.below(n));
  check("below(2, 6, 52, 1000, 300)", belows, [1, 4, 11, 323, 155]);
  r = await SeededRandom.create(S1);
  const twelve = [];
  for (let i = 0; i < 12; i++) twelve.push(await r.below(200));
  check("twelve below(200)", twelve, [107, 52, 11, 52, 43, 13, 122, 31, 181, 109, 92, 43]);
  check("sha256(kifu)", await sha256Hex(KIFU), "eef036497504371c0420214b5bb3e99461d41b2d269499cc97e850d377dde951");
  r = await SeededRandom.create(KIFU);
  check("kifu shuffle", await r.shuffled([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]), [1, 2, 9, 6, 4, 7, 3, 5, 8, 0]);
}

// ---------------------------------------------------------------- fairness.md: each game's deal for S1

/** The setup event's fields a seed deals, by path: {"private.0.deck": [...], ...}. */
async function deal(game, n, options = {}, seed = S1, fixed = null) {
  const rng = await SeededRandom.create(seed);
  const { fields } = await expectedDeal(game, n, toJSONValue(options), rng, fixed && toJSONValue(fixed));
  return Object.fromEntries(fields.map(([path, value]) => [path.join("."), value]));
}

async function sanBanVectors() {
  const d = await deal("san-ban", 2);
  check("san-ban deck 0", d["private.0.deck"], ["sb-013", "sb-018", "sb-017", "sb-023", "sb-019"]);
  check("san-ban deck 1", d["private.1.deck"], ["sb-022", "sb-020", "sb-016", "sb-015", "sb-014"]);
  check("san-ban coin", d["private.hidden"], { coin_winner: 0 });
  const adv = await deal("san-ban", 2, { mode: "advanced" });
  check("san-ban advanced", adv["private.hidden"], { coin_winner: 0, shuffles: [[0, 3, 2, 4, 1], [4, 0, 3, 2, 1]] });
  const first = await deal("san-ban", 2, { mode: "advanced", first: 0 });
  check("san-ban advanced, first 0", first["private.hidden"], { shuffles: [[2, 0, 3, 1, 4], [0, 2, 1, 4, 3]] });
  const fixed = await deal("san-ban", 2, { first: 1 }, S1, { decks: [["sb-001", "sb-002"], ["sb-003", { id: "x" }]] });
  check("san-ban fixed deal", [fixed["private.1.deck"], fixed["data.first"], typeof fixed["private.hidden"]],
    [["sb-003", "x"], 1, "symbol"]); // no hidden part: no coin, no shuffle
}

async function ninNalVectors() {
  const deck = words(`rock--2 rock--3 paper--3 scissors--2 paper-2 paper--1 scissors-9 scissors-5 paper--6 paper--2
    scissors-3 scissors--6 scissors-1 scissors-2 paper-9 scissors--3 rock-10 rock-9 paper-7 paper-3
    paper-6 rock-7 scissors-8 rock-2 scissors-4 paper-4 paper--4 scissors-6 rock-5 scissors--1
    paper-8 paper-5 rock-1 rock-4 paper-1 rock--5 scissors--5 scissors--4 scissors-7 rock--4
    paper--5 rock-8 rock--6 rock-3 paper-10 scissors-10 rock--1 rock-6`);
  const two = await deal("nin-nal", 2);
  check("nin-nal piles", two["data.piles"], deck.slice(0, 3));
  check("nin-nal hands", [two["private.0.hand"], two["private.1.hand"]], [deck.slice(3, 12), deck.slice(12, 21)]);
  check("nin-nal unused", two["private.hidden.unused"], deck.slice(21));
  const three = await deal("nin-nal", 3);
  check("nin-nal seat 2 of 3", three["private.2.hand"],
    words("rock-7 scissors-8 rock-2 scissors-4 paper-4 paper--4 scissors-6 rock-5 scissors--1"));
  check("nin-nal unused of 3", three["private.hidden.unused"].length === 18 && three["private.hidden.unused"][0], "paper-8");
}

async function kiriAiVectors() {
  const specials = async (seed) => {
    const d = await deal("kiri-ai", 2, {}, seed);
    return [d["private.0.special"], d["private.1.special"], d["private.hidden.set_aside"]];
  };
  check("kiri-ai S1", await specials(S1), ["zan-tetsu", "kesa", "counterattack"]);
  check("kiri-ai kifu", await specials(KIFU), ["zan-tetsu", "counterattack", "kesa"]);
  check("kiri-ai zeros", await specials(new Uint8Array(32)), ["counterattack", "zan-tetsu", "kesa"]);
  const fixed = await deal("kiri-ai", 2, {}, S1, { specials: ["counterattack", "kesa"] });
  check("kiri-ai fixed", fixed["private.hidden.set_aside"], "zan-tetsu");
}

async function sanNiIchiVectors() {
  const hands = (d, n) => Array.from({ length: n }, (_, s) => d[`private.${s}.hand`].join(" "));
  const three = await deal("san-ni-ichi", 3);
  check("san-ni-ichi weapons", three["data.weapons_in_play"], words("block-11 sai-15 sai-16 yoso-kogeki-17 torinoko-20 shuriken-21"));
  check("san-ni-ichi hands", hands(three, 3), ["water-1 fire-1 water-2 sai-16 block-11 water-4 wood-3",
    "wood-4 water-3 sai-15 wood-1 yoso-kogeki-17 fire-4 torinoko-20", "fire-5 wood-2 water-5 fire-3 shuriken-21 fire-2 wood-5"]);
  const alt2 = await deal("san-ni-ichi", 3, { deck: "alt-2" });
  check("san-ni-ichi alt-2", [alt2["data.weapons_in_play"], ...hands(alt2, 3)], [[],
    "fire-6 fire-1 fire-7 wood-4 wood-2 water-2 water-6", "water-7 water-1 wood-3 water-4 wood-5 fire-4 wood-6",
    "fire-5 water-5 water-3 fire-3 wood-7 fire-2 wood-1"]);
  for (const options of [{}, { teams: true }]) {
    const four = await deal("san-ni-ichi", 4, options);
    check(`san-ni-ichi 4 players ${JSON.stringify(options)}`, [four["data.weapons_in_play"].join(" "), ...hands(four, 4)], [
      "block-11 block-12 tonfa-13 tonfa-14 sai-15 sai-16 yoso-kogeki-17 yoso-kogeki-18 torinoko-20 shuriken-21",
      "fire-5 sai-15 fire-3 water-2 fire-2 wood-4 wood-5", "water-6 yoso-kogeki-18 block-11 water-1 tonfa-14 yoso-kogeki-17 fire-4",
      "tonfa-13 water-4 wood-3 sai-16 wood-2 wood-1 water-3", "shuriken-21 water-5 torinoko-20 wood-6 fire-6 block-12 fire-1"]);
  }
}

async function frontLineVectors() {
  const cut = (d, s) => [d["data.front"][s].join(" "), d["data.reinforcements"][s].join(" "), d["private.hidden.draw"][s].length,
    d["private.hidden.draw"][s][0], d["private.hidden.draw"][s].at(-1)];
  const two = await deal("front-line", 2);
  check("front-line 2p seat 0", cut(two, 0), ["paper-8 paper-5 rock-3", "water-9 lizard-6 water-4", 26, "lizard-j", "paper-6"]);
  check("front-line 2p seat 1", cut(two, 1), ["scissors-8 paper-3 scissors-7", "paper-2 water-k rock-k", 26, "scissors-2", "water-a"]);
  check("front-line 2p aside", [two["private.hidden.set_aside"], two["data.set_aside"]], [["lizard-4"], 1]);
  const three = await deal("front-line", 3);
  check("front-line 3p", [cut(three, 1), cut(three, 2), three["private.hidden.set_aside"]], [
    ["rock-10 scissors-a water-2", "lizard-a paper-q lizard-7", 15, "rock-9", "lizard-9"],
    ["paper-k water-j scissors-5", "rock-a water-3 scissors-4", 15, "rock-8", "rock-q"], ["water-a", "lizard-4"]]);
  const own = await deal("front-line", 2, { deck: "per-player" });
  check("front-line per-player", [cut(own, 0), cut(own, 1), own["private.hidden.set_aside"]], [
    ["s0:paper-8 s0:paper-5 s0:rock-3", "s0:water-9 s0:lizard-6 s0:water-4", 59, "s0:lizard-j", "s0:lizard-4"],
    ["s1:rock-3 s1:water-q s1:scissors-5", "s1:lizard-4 s1:scissors-4 s1:scissors-a", 59, "s1:scissors-10", "s1:paper-7"], []]);
  const jokers = await deal("front-line", 2, { jokers: true });
  check("front-line jokers", [cut(jokers, 0), cut(jokers, 1), jokers["private.hidden.set_aside"]], [
    ["rock-8 water-7 paper-2", "lizard-8 water-9 water-q", 29, "scissors-8", "paper-7"],
    ["scissors-10 rock-9 lizard-2", "water-4 joker-water scissors-7", 29, "rock-3", "scissors-q"], []]);
  const fixed = await deal("front-line", 2, {}, S1, { piles: [["rock-a", "rock-2"], ["water-k"]] });
  check("front-line fixed", [fixed["data.front"], fixed["data.reinforcements"], fixed["private.hidden.set_aside"].length],
    [[["rock-a", "rock-2"], ["water-k"]], [[], []], 62]);
}

// ---------------------------------------------------------------- canonical JSON and strict JSON

function jsonVectors() {
  const cases = [
    ['{"b":1,"a":[1.0,1e16,1.5e-05,0.1,-0.0,true,null]}', '{"a":[1.0,1e+16,1.5e-05,0.1,-0.0,true,null],"b":1}'],
    ['"\\u0000\\u001f\\u007f\\"\\\\\\/é\\ud83d\\ude00"', '"\\u0000\\u001f\u007f\\"\\\\/é😀"'],
    ['{"\\ue000":1,"\\ud83d\\ude00":2}', '{"\ue000":1,"😀":2}'],
    ["9223372036854775807", "9223372036854775807"],
    ["[1E2,123456789012345678.0,0.0001,1e-4]", "[100.0,1.2345678901234568e+17,0.0001,0.0001]"],
  ];
  for (const [text, canonical] of cases) check(`canonical ${text}`, canonicalText(parseStrictJSON(text)), canonical);
  const refused = ['{"a":1,"a":2}', "NaN", "[Infinity]", '"\\ud800"', "9223372036854775808", "1e400", "[01]", "[1,]",
    '"\t"', "", "\ufeff{}", "1e19", `${"[".repeat(65)}${"]".repeat(65)}`];
  for (const text of refused) {
    let outcome = "accepted";
    try {
      parseStrictJSON(text);
    } catch {
      outcome = "refused";
    }
    check(`strict JSON refuses ${JSON.stringify(text).slice(0, 40)}`, outcome, "refused");
  }
  check("nesting of 64 is fine", canonicalText(parseStrictJSON(`${"[".repeat(64)}${"]".repeat(64)}`)).length, 128);
  check("bad UTF-8 refused", (() => { try { parseStrictJSON(Uint8Array.of(0x22, 0xff, 0x22)); return "accepted"; } catch { return "refused"; } })(), "refused");
}

await envelopeVector();
await signatureVectors();
await treeVectors();
await generatorVectors();
await sanBanVectors();
await ninNalVectors();
await kiriAiVectors();
await sanNiIchiVectors();
await frontLineVectors();
jsonVectors();
console.log(`${passed} vectors passed, ${failures} failed`);
process.exitCode = failures ? 1 : 0;
