// An entry line: steps 1-3 of FORMAT.md 5.1, the signing and rotation
// messages (3.5, 4.3), and the enums and limits of section 2.
import { codePoints, concat, decodeUtf8, utf8 } from "./bytes.js";
import { b3 } from "./crypto.js";
import { BadNumber, isInt, isObject, jcs, parseJson } from "./json.js";

export const CONTENT_TYPES = ["memory", "identity", "decision", "commitment", "preference", "fact", "lesson", "episode"];
export const SYSTEM_TYPES = ["genesis", "redaction", "key-rotation"];
export const TIERS = ["committed", "relationship", "ephemeral"];
export const SOURCES = ["manual", "auto", "curation"];
export const FIELDS = ["content", "importance", "key", "meta", "prev", "seq", "sig", "size", "source", "tier", "ts", "type", "v"];

export const MAX_LINE_BYTES = 8192; // with its "\n"
export const MAX_META_BYTES = 4096;
export const MAX_META_DEPTH = 4;
export const HASH_RE = /^b3:[0-9a-f]{64}$/;
export const KEY_RE = /^ed25519:[0-9a-f]{64}$/;
export const SIG_RE = /^[0-9a-f]{128}$/;
const TS_RE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.[0-9]{6}Z$/;
const META_KEY_RE = /^[A-Za-z0-9_.:-]{1,64}$/;

export const ENTRY_TAG = utf8.encode("memory-chain/v1/entry\n");
export const ROTATION_TAG = utf8.encode("memory-chain/v1/key-rotation\n");

export class Malformed extends Error {
  constructor(step, reason, message) {
    super(message);
    this.step = step;
    this.reason = reason;
  }
}

const malformed = (step, message) => new Malformed(step, step === 3 ? "not-canonical" : "malformed", message);

function realTime(ts) {
  const m = TS_RE.exec(ts);
  if (m === null) return false;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number);
  if (year < 1 || month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return day >= 1 && day <= days;
}

// Depth (containers, counting this one), every member name, every value's kind.
function metaProblem(value, depth) {
  if (value instanceof BadNumber) return `${value.text} is not an integer`;
  if (Array.isArray(value) || isObject(value)) {
    if (depth > MAX_META_DEPTH) return `meta is nested deeper than ${MAX_META_DEPTH}`;
    const items = Array.isArray(value) ? value : Object.values(value);
    if (!Array.isArray(value)) {
      for (const k of Object.keys(value)) if (!META_KEY_RE.test(k)) return `meta key ${JSON.stringify(k)} is not allowed`;
    }
    for (const item of items) {
      const p = metaProblem(item, depth + 1);
      if (p !== null) return p;
    }
  }
  return null;
}

const exactly = (obj, names) => {
  const keys = Object.keys(obj).sort();
  return keys.length === names.length && names.every((n, i) => n === keys[i]);
};

function systemMetaProblem(type, meta) {
  if (type === "genesis") {
    if (!exactly(meta, ["name"])) return "genesis meta must be exactly {name}";
    const n = typeof meta.name === "string" ? codePoints(meta.name) : 0;
    return n >= 1 && n <= 200 ? null : "genesis name must be 1 to 200 characters";
  }
  if (type === "redaction") {
    if (!exactly(meta, ["content", "reason", "target"])) return "redaction meta must be exactly {target, content, reason}";
    if (!isInt(meta.target) || meta.target < 0) return "redaction target must be a seq";
    if (typeof meta.content !== "string" || !HASH_RE.test(meta.content)) return "redaction content must be a hash";
    const n = typeof meta.reason === "string" ? codePoints(meta.reason) : 0;
    return n >= 1 && n <= 1000 ? null : "redaction reason must be 1 to 1000 characters";
  }
  if (!exactly(meta, ["new_key", "new_sig"])) return "key-rotation meta must be exactly {new_key, new_sig}";
  if (typeof meta.new_key !== "string" || !KEY_RE.test(meta.new_key)) return "new_key is not a key id";
  if (typeof meta.new_sig !== "string" || !SIG_RE.test(meta.new_sig)) return "new_sig is not a signature";
  return null;
}

// Step 2: the rules of 2.1-2.3 and section 4, on a parsed object.
export function fieldProblem(e) {
  if (!exactly(e, FIELDS)) return "the entry must have exactly the 13 fields of format v1";
  const inRange = (v, lo, hi) => isInt(v) && v >= lo && v <= hi;
  if (e.v !== 1) return "v must be 1";
  if (!inRange(e.seq, 0, Number.MAX_SAFE_INTEGER)) return "seq must be an integer >= 0";
  if (typeof e.ts !== "string" || !realTime(e.ts)) return "ts must be a real time YYYY-MM-DDTHH:MM:SS.ffffffZ";
  const system = SYSTEM_TYPES.includes(e.type);
  if (typeof e.type !== "string" || !(system || CONTENT_TYPES.includes(e.type))) return "unknown type";
  if (typeof e.tier !== "string" || !TIERS.includes(e.tier)) return "unknown tier";
  if (typeof e.source !== "string" || !SOURCES.includes(e.source)) return "unknown source";
  if (!inRange(e.importance, 0, 100)) return "importance must be an integer 0 to 100";
  if (!inRange(e.size, 0, Number.MAX_SAFE_INTEGER)) return "size must be an integer >= 0";
  if (typeof e.key !== "string" || !KEY_RE.test(e.key)) return "key is not a key id";
  if (typeof e.sig !== "string" || !SIG_RE.test(e.sig)) return "sig is not a signature";
  if (e.seq === 0) {
    if (e.type !== "genesis" || e.prev !== null) return "seq 0 must be the genesis, with prev null";
  } else {
    if (e.type === "genesis") return "genesis appears only at seq 0";
    if (typeof e.prev !== "string" || !HASH_RE.test(e.prev)) return "prev must be a hash";
  }
  if (!isObject(e.meta)) return "meta must be an object";
  const p = metaProblem(e.meta, 1);
  if (p !== null) return p;
  if (utf8.encode(jcs(e.meta)).length > MAX_META_BYTES) return `meta is larger than ${MAX_META_BYTES} bytes`;
  if (system) {
    if (e.content !== null || e.size !== 0 || e.tier !== "committed") {
      return "a system entry has content null, size 0 and tier committed";
    }
    return systemMetaProblem(e.type, e.meta);
  }
  if (typeof e.content !== "string" || !HASH_RE.test(e.content)) return "content must be a hash";
  return null;
}

// Steps 1-3 on one line without its "\n": the parsed entry, or Malformed.
export function parseLine(line) {
  if (line.length > MAX_LINE_BYTES - 1) throw malformed(1, `line is longer than ${MAX_LINE_BYTES - 1} bytes`);
  let obj;
  try {
    obj = parseJson(decodeUtf8(line));
  } catch (err) {
    throw malformed(1, `not UTF-8 JSON: ${err.message}`);
  }
  if (!isObject(obj)) throw malformed(1, "the line is not a JSON object");
  const problem = fieldProblem(obj);
  if (problem !== null) throw malformed(2, problem);
  const canonical = utf8.encode(jcs(obj));
  if (canonical.length !== line.length || !canonical.every((b, i) => b === line[i])) {
    throw malformed(3, "the line is not in canonical form");
  }
  return obj;
}

function without(obj, name) {
  const copy = Object.create(null);
  for (const k of Object.keys(obj)) if (k !== name) copy[k] = obj[k];
  return copy;
}

// 3.5: ENTRY_TAG + JCS(entry without sig).
export function signingMessage(entry) {
  return concat(ENTRY_TAG, utf8.encode(jcs(without(entry, "sig"))));
}

// 4.3: ROTATION_TAG + JCS(entry without sig, meta without new_sig).
export function rotationMessage(entry) {
  const r = without(entry, "sig");
  r.meta = without(entry.meta, "new_sig");
  return concat(ROTATION_TAG, utf8.encode(jcs(r)));
}

export const entryHash = (line) => b3(line);
