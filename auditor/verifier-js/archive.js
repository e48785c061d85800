// Export archives (FORMAT.md 16.5): the container, then the lines of a
// whole export (16.5.1) or of a partial one with its proofs (16.5.2).
import { decodeUtf8, fromHex, toHex, utf8 } from "./bytes.js";
import { b3, verifySig } from "./crypto.js";
import { isInt, isObject, parseJson } from "./json.js";
import { Malformed, parseLine, rotationMessage, signingMessage, HASH_RE } from "./entry.js";
import { CheckpointError, originOf, parseCheckpoint, signedBy } from "./checkpoint.js";
import { ProofError, leafHash, verifyInclusion } from "./merkle.js";
import { ChainState, Failure, splitLines } from "./chain.js";
import { TarError, TarReader, gunzip } from "./tar.js";

export const ARCHIVE_FORMAT = "memory-chain-export/1";
export const PROOF_FORMAT = "memory-chain-export-proof/1";
const STEP_ARCHIVE = 0;
const STEP_PROOF = 13;

export const LIMITS = {
  "manifest.json": 1 << 20,
  keys: 1 << 20,
  checkpoint: 65536,
  note: 65536,
  "anchors.jsonl": 64 << 20,
  "proof.json": 256 << 20,
  blob: 64 << 20,
  blobsTotal: 4 * 2 ** 30,
  "chain.jsonl": 2 ** 40,
  members: 2 ** 24,
};

class Bad extends Error {
  constructor(reason, message, seq = 0, step = STEP_ARCHIVE) {
    super(message);
    this.failure = new Failure(seq, step, reason, message);
  }
}

const NOTE_RE = /^checkpoints\/([0-9]{20})\.note$/;
const BLOB_RE = /^content\/([0-9a-f]{2})\/([0-9a-f]{62})$/;
const FIXED = ["manifest.json", "chain.jsonl", "keys", "checkpoint", "anchors.jsonl", "proof.json"];

function kindOf(name) {
  if (FIXED.includes(name)) return name;
  if (NOTE_RE.test(name)) return "note";
  if (BLOB_RE.test(name)) return "blob";
  return null;
}

function admit(m, seen) {
  const parts = m.name.split("/");
  if (m.name.startsWith("/") || m.name.includes("\\") || m.name.includes("\0") || parts.includes("..")) {
    throw new Bad("unsafe-member", `member ${m.name} has an absolute or parent-relative path`);
  }
  if (m.type !== "0") throw new Bad("unsafe-member", `member ${m.name} is not a regular file`);
  const kind = kindOf(m.name);
  if (kind === null) throw new Bad("unexpected-member", `member ${m.name} is not part of an export`);
  if (seen.has(m.name)) throw new Bad("duplicate-member", `member ${m.name} appears twice`);
  seen.add(m.name);
  if (m.size > LIMITS[kind]) throw new Bad("too-large", `member ${m.name} is ${m.size} bytes, over the limit`);
  return kind;
}

const uint = (v) => isInt(v) && v >= 0;

function parseManifest(data) {
  let obj;
  try {
    obj = parseJson(decodeUtf8(data));
  } catch {
    throw new Bad("bad-manifest", "manifest.json is not JSON");
  }
  const bad = (why) => new Bad("bad-manifest", `manifest.json: ${why}`);
  if (!isObject(obj) || obj.format !== ARCHIVE_FORMAT) throw bad(`not a ${ARCHIVE_FORMAT} archive`);
  if (typeof obj.chain_id !== "string" || !HASH_RE.test(obj.chain_id)) throw bad("chain_id is not a chain id");
  for (const k of ["from", "to", "entries"]) if (!uint(obj[k])) throw bad(`${k} is not an integer >= 0`);
  if (obj.from > obj.to || obj.entries !== obj.to - obj.from + 1) throw bad("from, to and entries disagree");
  for (const k of ["complete", "content"]) if (typeof obj[k] !== "boolean") throw bad(`${k} is not true or false`);
  if (obj.complete && obj.from !== 0) throw bad("a complete export starts at seq 0");
  if (!isObject(obj.members) || !isObject(obj.blobs)) throw bad("members and blobs must be objects");
  const members = new Map();
  for (const [name, info] of Object.entries(obj.members)) {
    const kind = kindOf(name);
    if (kind === null || kind === "blob" || kind === "manifest.json" || !isObject(info)) throw bad(`lists an unexpected member ${name}`);
    if (typeof info.b3 !== "string" || !HASH_RE.test(info.b3)) throw bad(`the b3 of ${name} is not a hash`);
    if (!uint(info.size)) throw bad("size is not an integer >= 0");
    members.set(name, { size: info.size, b3: info.b3 });
  }
  for (const name of ["chain.jsonl", "keys"]) if (!members.has(name)) throw bad(`does not list ${name}`);
  if (!obj.complete) {
    for (const name of ["checkpoint", "proof.json"]) if (!members.has(name)) throw bad(`a partial export needs ${name}`);
    if ([...members.keys()].some((n) => kindOf(n) === "note")) throw bad("a partial export carries no checkpoints/ notes");
  } else if (members.has("proof.json")) throw bad("a complete export carries no proof.json");
  if (!uint(obj.chain_size)) throw bad("chain_size is not an integer >= 0");
  if (!uint(obj.blobs.count)) throw bad("count is not an integer >= 0");
  if (!uint(obj.blobs.bytes)) throw bad("bytes is not an integer >= 0");
  return {
    chainId: obj.chain_id,
    first: obj.from,
    last: obj.to,
    entries: obj.entries,
    complete: obj.complete,
    content: obj.content,
    members,
    blobCount: obj.blobs.count,
    blobBytes: obj.blobs.bytes,
  };
}

function note(data, label) {
  try {
    return parseCheckpoint(data);
  } catch (err) {
    if (err instanceof CheckpointError) throw new Bad("bad-checkpoint", `${label} is not a valid checkpoint: ${err.message}`, 0, 13);
    throw err;
  }
}

// Read the members up to chain.jsonl (16.5 steps 1-4).
function readMembers(tar, c) {
  const seen = new Set();
  let m = tar.next();
  if (m === null) throw new Bad("bad-archive", "the archive is empty");
  if (admit(m, seen) !== "manifest.json") throw new Bad("bad-archive", `the first member is ${m.name}, not manifest.json`);
  const man = (c.manifest = parseManifest(tar.data(m)));
  let count = 1;
  for (;;) {
    m = tar.next();
    if (m === null) throw new Bad("missing-member", "the archive has no chain.jsonl");
    count += 1;
    if (count > LIMITS.members) throw new Bad("too-large", "the archive has too many members");
    const kind = admit(m, seen);
    if (kind === "chain.jsonl") break;
    const data = tar.data(m);
    if (kind === "blob") {
      if (!man.content) throw new Bad("unexpected-member", `${m.name} in an export without content`);
      c.blobBytes += data.length;
      if (c.blobBytes > LIMITS.blobsTotal) throw new Bad("too-large", "the archive's blobs are over the size limit");
      c.blobs.set("b3:" + m.name.slice(8, 10) + m.name.slice(11), data);
      continue;
    }
    const listed = man.members.get(m.name);
    if (listed === undefined) throw new Bad("unexpected-member", `member ${m.name} is not in the manifest`);
    if (listed.size !== data.length || listed.b3 !== b3(data)) throw new Bad("manifest-mismatch", `member ${m.name} does not match the manifest`);
    if (kind === "keys") c.keys = data;
    else if (kind === "proof.json") c.proof = data;
    else if (kind === "checkpoint") c.latest = note(data, "the archive's checkpoint");
    else if (kind === "note") {
      const cp = note(data, `the checkpoint in ${m.name}`);
      if (m.name !== `checkpoints/${String(cp.size).padStart(20, "0")}.note`) throw new Bad("bad-checkpoint", `${m.name} holds a checkpoint of size ${cp.size}`);
      c.notes.push(cp);
    }
  }
  const missing = [...man.members.keys()].filter((n) => !seen.has(n)).sort();
  if (missing.length > 0) throw new Bad("missing-member", `the manifest lists ${missing[0]}, which is not among the members before chain.jsonl`);
  return m;
}

function blobGetter(c, requested) {
  if (!c.manifest.content) return null;
  return (hash) => {
    requested.add(hash);
    return c.blobs.get(hash) ?? null;
  };
}

// 16.5 step 6, after the lines verified.
function afterLines(state, chainBytes, split, c, keys, requested) {
  const man = c.manifest;
  if (split.tail.length > 0) throw new Bad("malformed", "chain.jsonl ends with an unterminated line", state.size, 1);
  if (state.chainId !== man.chainId) throw new Bad("manifest-mismatch", `the manifest names chain ${man.chainId}`);
  if (split.lines.length !== man.entries) throw new Bad("manifest-mismatch", `chain.jsonl has ${split.lines.length} lines; the manifest says ${man.entries}`);
  const listed = man.members.get("chain.jsonl");
  if (listed.size !== chainBytes.length || listed.b3 !== b3(chainBytes)) throw new Bad("manifest-mismatch", "member chain.jsonl does not match the manifest");
  const want = keys.map((k) => k + "\n").join("");
  if (decodeKeys(c.keys) !== want) throw new Bad("bad-keys", "member keys is not the chain's key history");
  if (c.blobs.size !== man.blobCount || c.blobBytes !== man.blobBytes) throw new Bad("manifest-mismatch", "the blobs do not match the manifest's count and bytes");
  const unused = [...c.blobs.keys()].filter((h) => !requested.has(h)).sort();
  if (unused.length > 0) throw new Bad("unexpected-member", `blob ${unused[0]} belongs to no exported entry`);
}

function decodeKeys(bytes) {
  try {
    return decodeUtf8(bytes);
  } catch {
    return null;
  }
}

function runLines(state, lines, blobs, onProgress) {
  for (let i = 0; i < lines.length; i++) {
    const failure = state.apply(lines[i], blobs);
    if (failure !== null) return failure;
    if (onProgress !== null && i % 256 === 255) onProgress(i + 1, lines.length);
  }
  return null;
}

function checkWhole(c, chainBytes, { trustedKey, chainId, onProgress }) {
  const checkpoints = [...c.notes];
  if (c.latest !== null && checkpoints.every((cp) => cp.text !== c.latest.text)) checkpoints.push(c.latest);
  const state = new ChainState({ trustedKey, chainId, checkpoints });
  const requested = new Set();
  const blobs = blobGetter(c, requested);
  const split = splitLines(chainBytes);
  const failure = runLines(state, split.lines, blobs, onProgress) ?? state.finish(blobs !== null);
  if (failure !== null) return { state, failure };
  afterLines(state, chainBytes, split, c, state.keys, requested);
  return { state, failure: null, checkpoints: checkpoints.length };
}

function hexes(value, what) {
  if (!Array.isArray(value)) throw new Bad("bad-proof", `proof.json: ${what} is not a list`);
  const out = value.map((h) => fromHex(h));
  if (out.some((h) => h === null)) throw new Bad("bad-proof", `proof.json: ${what} holds a hash that is not hex`);
  return out;
}

// 16.5.2 steps 1-3: the proven context lines.
function checkContext(c, items) {
  const cp = c.latest;
  if (!Array.isArray(items) || items.length === 0) throw new Bad("bad-proof", "proof.json: context must list the genesis line first");
  const keys = [];
  const rotations = [];
  const lines = new Map();
  const objs = new Map();
  let lastSeq = -1;
  items.forEach((item, i) => {
    if (!isObject(item) || typeof item.line !== "string") throw new Bad("bad-proof", `proof.json: context item ${i} has no line`);
    const line = utf8.encode(item.line);
    let obj;
    try {
      obj = parseLine(line);
    } catch (err) {
      if (err instanceof Malformed) throw new Bad("malformed-entry", `context line ${i}: ${err.message}`, 0, STEP_PROOF);
      throw err;
    }
    const seq = obj.seq;
    if (seq <= lastSeq || (i === 0) !== (seq === 0)) throw new Bad("bad-proof", "proof.json: context lines must start at seq 0, in seq order");
    lastSeq = seq;
    if (!(seq < cp.size)) throw new Bad("beyond-checkpoint", `context line at seq ${seq} is not in a checkpoint of size ${cp.size}`, seq, STEP_PROOF);
    const proof = hexes(item.inclusion, `the inclusion of seq ${seq}`);
    try {
      verifyInclusion(seq, cp.size, leafHash(line), proof, cp.root);
    } catch (err) {
      if (err instanceof ProofError) throw new Bad("bad-inclusion", `context line at seq ${seq} is not in the checkpoint's tree: ${err.message}`, seq, STEP_PROOF);
      throw err;
    }
    const key = seq === 0 ? obj.key : keys[keys.length - 1];
    if (obj.key !== key || !verifySig(key, signingMessage(obj), obj.sig)) throw new Bad("bad-signature", `context line at seq ${seq} is not signed by ${key}`, seq, 8);
    if (seq === 0) keys.push(key);
    else if (obj.type === "key-rotation") {
      const newKey = obj.meta.new_key;
      if (newKey === key || !verifySig(newKey, rotationMessage(obj), obj.meta.new_sig)) throw new Bad("invalid-rotation", `the rotation at seq ${seq} is not valid`, seq, 9);
      keys.push(newKey);
      rotations.push([seq, newKey]);
    }
    lines.set(seq, line);
    objs.set(seq, obj);
  });
  const chainId = b3(lines.get(0));
  if (cp.origin !== originOf(chainId)) throw new Bad("checkpoint-origin", `the checkpoint is for ${cp.origin}, not chain ${chainId}`);
  if (!signedBy(cp, keys[keys.length - 1])) {
    throw new Bad("checkpoint-signature", `the checkpoint is not signed by ${keys[keys.length - 1]}, the key in force at size ${cp.size}`, Number(cp.size) - 1, STEP_PROOF);
  }
  if (c.manifest.chainId !== chainId) throw new Bad("manifest-mismatch", `the manifest names chain ${c.manifest.chainId}, not ${chainId}`);
  if (!(c.manifest.last < cp.size)) throw new Bad("beyond-checkpoint", `the checkpoint (size ${cp.size}) does not cover seq ${c.manifest.last}`, c.manifest.last, STEP_PROOF);
  return { chainId, keys, rotations, lines, objs };
}

function checkRange(c, chainBytes, { trustedKey, chainId, onProgress }) {
  const man = c.manifest;
  const cp = c.latest;
  let proof;
  try {
    proof = parseJson(decodeUtf8(c.proof));
  } catch {
    throw new Bad("bad-proof", "proof.json is not JSON");
  }
  if (!isObject(proof) || proof.format !== PROOF_FORMAT) throw new Bad("bad-proof", `proof.json is not a ${PROOF_FORMAT} object`);
  if (proof.checkpoint_size !== cp.size) throw new Bad("bad-proof", "proof.json is not for the archive's checkpoint");
  const lastProof = hexes(proof.last, "last");
  const ctx = checkContext(c, proof.context);
  if (chainId !== null && ctx.chainId !== chainId) throw new Bad("chain-id-mismatch", `chain id ${ctx.chainId} is not the pinned ${chainId}`, 0, 11);
  if (trustedKey !== null && !ctx.keys.includes(trustedKey)) {
    throw new Bad("untrusted-key", `the trusted key ${trustedKey} is neither the genesis key ${ctx.keys[0]} nor a key this chain rotated to`, 0, 7);
  }
  const { first, last } = man;
  const state = new ChainState();
  const later = new Map();
  let ts = "";
  for (const [seq, obj] of ctx.objs) {
    if (seq < first) {
      if (obj.ts > ts) ts = obj.ts;
      if (obj.content !== null) state.entries.set(seq, { content: obj.content, committed: obj.tier === "committed", redacted: false });
    } else if (seq > last && obj.type === "redaction") {
      const target = obj.meta.target;
      if (first <= target && target <= last) later.set(target, obj.meta.content);
    }
  }
  const split = splitLines(chainBytes);
  let prev = null;
  if (first > 0 && split.lines.length > 0) {
    try {
      const head = parseJson(decodeUtf8(split.lines[0]));
      prev = isObject(head) && typeof head.prev === "string" ? head.prev : null;
    } catch {
      prev = null;
    }
  }
  state.size = first;
  state.head = prev;
  state.ts = ts;
  state.key = ctx.keys[0];
  for (const [seq, k] of ctx.rotations) if (seq < first) state.key = k;
  state.chainId = first > 0 ? ctx.chainId : null;
  const requested = new Set();
  const blobs = blobGetter(c, requested);
  let failure = runLines(state, split.lines, blobs, onProgress);
  if (failure === null) {
    // A redaction after the range, proven in the context, justifies an absent blob.
    for (const [target, content] of later) {
      const e = state.entries.get(target);
      if (state.pending.get(target) === content && !(e && e.committed)) state.pending.delete(target);
    }
    failure = state.finish(blobs !== null);
  }
  if (failure !== null) return { state, failure };
  if (state.size !== last + 1) throw new Bad("manifest-mismatch", `chain.jsonl ends at seq ${state.size - 1}, not ${last}`, state.size);
  for (let seq = first; seq <= last; seq++) {
    const proven = ctx.lines.get(seq);
    const line = split.lines[seq - first];
    if (proven !== undefined && (proven.length !== line.length || !proven.every((b, i) => b === line[i]))) {
      throw new Bad("inconsistent", `the line at seq ${seq} differs from the proven context line`, seq, STEP_PROOF);
    }
  }
  const inRange = ctx.rotations.filter(([s]) => first <= s && s <= last).map(([, k]) => k);
  const want = (first === 0 ? [ctx.keys[0]] : []).concat(inRange);
  if (state.keys.length !== want.length || state.keys.some((k, i) => k !== want[i])) {
    throw new Bad("inconsistent", "the key rotations in the range are not the proven ones", last, STEP_PROOF);
  }
  try {
    verifyInclusion(last, cp.size, leafHash(split.lines[split.lines.length - 1]), lastProof, cp.root);
  } catch (err) {
    if (err instanceof ProofError) throw new Bad("bad-inclusion", `the line at seq ${last} is not in the checkpoint's tree: ${err.message}`, last, STEP_PROOF);
    throw err;
  }
  afterLines(state, chainBytes, split, c, ctx.keys, requested);
  return { state, failure: null, checkpoints: 1 };
}

// Verify an export archive's bytes. Resolves to a report like verify
// --bundle --json: ok, entries, from, to, complete, content_checked, head,
// chain_id, key, root, checkpoints, blobs, failure.
export async function verifyArchive(bytes, { trustedKey = null, chainId = null, onProgress = null } = {}) {
  const c = { manifest: null, keys: new Uint8Array(0), latest: null, notes: [], proof: new Uint8Array(0), blobs: new Map(), blobBytes: 0 };
  let result;
  try {
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = await gunzip(bytes);
    const tar = new TarReader(bytes);
    const member = readMembers(tar, c);
    const chainBytes = tar.data(member);
    const pins = { trustedKey, chainId, onProgress };
    result = c.manifest.complete ? checkWhole(c, chainBytes, pins) : checkRange(c, chainBytes, pins);
    if (result.failure === null) {
      if (tar.next() !== null) throw new Bad("unexpected-member", "a member follows chain.jsonl");
      tar.checkEnd();
    }
  } catch (err) {
    if (err instanceof Bad) result = { state: null, failure: err.failure };
    else if (err instanceof TarError) result = { state: null, failure: new Failure(0, STEP_ARCHIVE, "bad-archive", `the archive is damaged or not a tar file: ${err.message}`) };
    else throw err;
  }
  const m = c.manifest;
  const s = result.state;
  const ok = result.failure === null;
  const f = result.failure;
  return {
    ok,
    entries: ok ? m.entries : null,
    from: m ? m.first : null,
    to: m ? m.last : null,
    complete: m ? m.complete : null,
    content_checked: m ? m.content : null,
    head: s ? s.head : null,
    chain_id: s && s.chainId ? s.chainId : m ? m.chainId : null,
    key: s ? s.key : null,
    root: ok && m.complete ? toHex(s.frontier.root()) : null,
    checkpoints: ok ? result.checkpoints : 0,
    blobs: c.blobs.size,
    failure: ok ? null : { seq: f.step === STEP_ARCHIVE ? null : f.seq, step: f.step, reason: f.reason, message: f.message },
  };
}

