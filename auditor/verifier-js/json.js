// A strict JSON reader and the canonical writer (FORMAT.md 3.1, 5.2).
//
// JSON.parse cannot tell 1 from 1.0 and accepts lone-surrogate escapes,
// so lines are read here: objects come back with a null prototype (a
// member may be called "__proto__"), integers as numbers, every other
// number as a BadNumber that the field checks reject (2.3), duplicate
// member names keep the last value. What a strict reader refuses outright
// (step 1): bad syntax, a BOM, NaN, control characters in strings, lone
// surrogates, nesting deeper than 1024, and a number that is infinite as
// a double.

export class JsonError extends Error {}

export class BadNumber {
  constructor(text) {
    this.text = text;
  }
}

export const MAX_DEPTH = 1024;
const SAFE = Number.MAX_SAFE_INTEGER;
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const UNESCAPE = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

export function parseJson(text) {
  let i = 0;
  const fail = (what) => {
    throw new JsonError(`${what} at character ${i}`);
  };
  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else return;
    }
  };
  const hex4 = () => {
    const h = text.substr(i, 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) fail("bad \\u escape");
    i += 4;
    return parseInt(h, 16);
  };
  const string = () => {
    i++; // the opening quote
    let out = "";
    let start = i;
    for (;;) {
      if (i >= text.length) fail("unterminated string");
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c < 0x20) fail("control character in string");
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += text.slice(start, i);
      i++;
      const e = text[i++];
      if (Object.hasOwn(UNESCAPE, e)) out += UNESCAPE[e];
      else if (e === "u") {
        const u = hex4();
        if (u >= 0xd800 && u <= 0xdbff) {
          if (text.substr(i, 2) !== "\\u") fail("lone high surrogate");
          i += 2;
          const low = hex4();
          if (low < 0xdc00 || low > 0xdfff) fail("bad low surrogate");
          out += String.fromCharCode(u, low);
        } else if (u >= 0xdc00 && u <= 0xdfff) fail("lone low surrogate");
        else out += String.fromCharCode(u);
      } else fail("bad escape");
      start = i;
    }
  };
  const value = (depth) => {
    ws();
    const c = text[i];
    if (c === "{" || c === "[") {
      if (depth >= MAX_DEPTH) fail("nested too deep");
      i++;
      ws();
      const close = c === "{" ? "}" : "]";
      const out = c === "{" ? Object.create(null) : [];
      if (text[i] === close) {
        i++;
        return out;
      }
      for (;;) {
        if (c === "{") {
          ws();
          if (text[i] !== '"') fail("expected a member name");
          const name = string();
          ws();
          if (text[i++] !== ":") fail("expected ':'");
          out[name] = value(depth + 1);
        } else out.push(value(depth + 1));
        ws();
        const sep = text[i++];
        if (sep === close) return out;
        if (sep !== ",") fail(`expected ',' or '${close}'`);
      }
    }
    if (c === '"') return string();
    if (text.startsWith("true", i)) return (i += 4), true;
    if (text.startsWith("false", i)) return (i += 5), false;
    if (text.startsWith("null", i)) return (i += 4), null;
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m === null) fail("expected a value");
    i += m[0].length;
    const n = Number(m[0]);
    if (!Number.isFinite(n)) fail("number is infinite as a double");
    if (m[1] === undefined && m[2] === undefined && Math.abs(n) <= SAFE && Number.isSafeInteger(n)) {
      return n === 0 ? 0 : n; // -0 reads as 0 (and then is not canonical)
    }
    return new BadNumber(m[0]);
  };
  const result = value(0);
  ws();
  if (i !== text.length) fail("data after the value");
  return result;
}

export function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof BadNumber);
}

export function isInt(v) {
  return typeof v === "number" && Number.isSafeInteger(v);
}

const ESCAPES = { '"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r" };

function jcsString(s) {
  // eslint-disable-next-line no-control-regex
  return '"' + s.replace(/["\\\u0000-\u001f]/g, (c) => ESCAPES[c] ?? "\\u00" + c.charCodeAt(0).toString(16).padStart(2, "0")) + '"';
}

// RFC 8785 for the value domain of FORMAT.md 2.3 (3.1): sorted members,
// no whitespace, integers in decimal, the mandatory escapes only.
export function jcs(v) {
  if (v === null) return "null";
  if (v === true) return "true";
  if (v === false) return "false";
  if (typeof v === "number") return String(v);
  if (typeof v === "string") return jcsString(v);
  if (Array.isArray(v)) return "[" + v.map(jcs).join(",") + "]";
  if (v instanceof BadNumber) throw new JsonError("not an integer: " + v.text);
  const names = Object.keys(v).sort();
  return "{" + names.map((k) => jcsString(k) + ":" + jcs(v[k])).join(",") + "}";
}
