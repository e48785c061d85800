// Proof bundles (FORMAT.md 14.2) and consistency proof files (section 15).
// Each check is one numbered step of the spec; a failure names its step,
// its reason code and, where a line is concerned, that line's seq.
import { decodeUtf8, fromBase64, fromHex, utf8 } from "./bytes.js";
import { b3, verifySig } from "./crypto.js";
import { Malformed, parseLine, rotationMessage, signingMessage } from "./entry.js";
import { isObject, parseJson } from "./json.js";
import { CheckpointError, originOf, parseCheckpoint, signedBy } from "./checkpoint.js";
import { ProofError, leafHash, verifyConsistency, verifyInclusion } from "./merkle.js";

export const BUNDLE_FORMAT = "memory-chain-proof/1";
export const CONSISTENCY_FORMAT = "memory-chain-consistency/1";
export const MAX_BUNDLE_BYTES = 16 << 20;

export class BundleError extends Error {
  constructor(step, reason, message, seq = null) {
    super(message);
    this.step = step;
    this.reason = reason;
    this.seq = seq;
  }
}

// What the spec's steps say in words, for a person (the page shows these).
export const BUNDLE_STEPS = {
  1: "You pinned a key or chain ID to check against",
  2: "The file is a memory-chain proof",
  3: "The agent's signed summary of its record (the checkpoint) is readable",
  4: "The record's first entry is included",
  5: "The record's first entry is well formed",
  6: "The first entry is part of the signed summary",
  7: "The first entry is signed by the agent's first key",
  8: "The signed summary is about this record",
  9: "Each change of the agent's key is in the record, signed by the old and the new key",
  10: "The summary is signed by the agent's key at that time",
  11: "The memory is part of the signed summary",
  12: "The memory is signed by the agent's key at that time",
  13: "The memory's text is exactly the text that was recorded",
  14: "The record is the one you pinned (chain ID)",
  15: "The agent's key is the one you pinned",
  16: "The list of public anchors is readable (they are checked online with memory-chain verify-proof --rpc)",
};

// The strict reader of json.js, as for lines: a lone surrogate or a BOM
// makes the file no JSON at all.
function parseJsonData(data) {
  try {
    return parseJson(decodeUtf8(data));
  } catch {
    return undefined;
  }
}

function proved(item, name, step) {
  if (!isObject(item) || typeof item.line !== "string" || !Array.isArray(item.inclusion)) {
    throw new BundleError(step, "malformed", `${name} must be an object with a string line and an inclusion list`);
  }
  const proof = item.inclusion.map((h) => fromHex(h));
  if (proof.some((h) => h === null)) throw new BundleError(step, "malformed", `${name}: inclusion hashes must be hex`);
  return { line: utf8.encode(item.line), proof };
}

function entryOf(line, name, step) {
  try {
    return parseLine(line);
  } catch (err) {
    if (err instanceof Malformed) throw new BundleError(step, "malformed-entry", `${name}: ${err.message}`);
    throw err;
  }
}

function include(p, seq, cp, name, step) {
  if (!(seq < cp.size)) throw new BundleError(step, "beyond-checkpoint", `${name} (seq ${seq}) is not in a checkpoint of size ${cp.size}`, seq);
  try {
    verifyInclusion(seq, cp.size, leafHash(p.line), p.proof, cp.root);
  } catch (err) {
    if (err instanceof ProofError) throw new BundleError(step, "bad-inclusion", `${name} (seq ${seq}) is not in the checkpoint's tree: ${err.message}`, seq);
    throw err;
  }
}

function signed(e, key, name, step) {
  if (e.key !== key) throw new BundleError(step, "wrong-key", `${name} (seq ${e.seq}) is signed by ${e.key}, not ${key}`, e.seq);
  if (!verifySig(key, signingMessage(e), e.sig)) throw new BundleError(step, "bad-signature", `${name} (seq ${e.seq}): the signature does not verify`, e.seq);
}

// 14.2, steps 1-16 in order. `passed(step)` is told each step that passed
// (the page lists them). Returns what the bundle proved.
export function verifyBundle(data, { trustedKey = null, chainId = null, passed = () => {} } = {}) {
  if (trustedKey === null && chainId === null) throw new BundleError(1, "unpinned", "pin a key or a chain id: a bundle alone proves nothing");
  passed(1);
  const obj = data.length > MAX_BUNDLE_BYTES ? undefined : parseJsonData(data);
  if (!isObject(obj) || obj.format !== BUNDLE_FORMAT) throw new BundleError(2, "not-a-bundle", `not a ${BUNDLE_FORMAT} bundle`);
  passed(2);
  if (typeof obj.checkpoint !== "string") throw new BundleError(3, "malformed", "the checkpoint is not a string");
  let cp;
  try {
    cp = parseCheckpoint(utf8.encode(obj.checkpoint));
  } catch (err) {
    if (err instanceof CheckpointError) throw new BundleError(3, "bad-checkpoint", `checkpoint: ${err.message}`);
    throw err;
  }
  passed(3);
  const g = proved(obj.genesis, "the genesis", 4);
  passed(4);
  const genesis = entryOf(g.line, "the genesis", 5);
  if (genesis.seq !== 0 || genesis.type !== "genesis") throw new BundleError(5, "malformed-entry", "the genesis line is not seq 0 of type genesis");
  passed(5);
  include(g, 0, cp, "the genesis", 6);
  passed(6);
  signed(genesis, genesis.key, "the genesis", 7);
  passed(7);
  const cid = b3(g.line);
  if (cp.origin !== originOf(cid)) throw new BundleError(8, "wrong-origin", `the checkpoint's origin ${cp.origin} is not chain ${cid}`);
  passed(8);

  if (!Array.isArray(obj.rotations)) throw new BundleError(9, "malformed", "rotations must be a list");
  const keys = [genesis.key];
  const rotations = [];
  let lastSeq = 0;
  obj.rotations.forEach((item, i) => {
    const name = `key change ${i + 1}`;
    const r = proved(item, name, 9);
    const rot = entryOf(r.line, name, 9);
    if (rot.type !== "key-rotation" || rot.seq <= lastSeq) throw new BundleError(9, "malformed-entry", `${name} is not a key rotation after the last`, rot.seq);
    include(r, rot.seq, cp, name, 9);
    signed(rot, keys[keys.length - 1], name, 9);
    if (!verifySig(rot.meta.new_key, rotationMessage(rot), rot.meta.new_sig)) {
      throw new BundleError(9, "bad-signature", `${name}: new_sig does not verify by ${rot.meta.new_key}`, rot.seq);
    }
    keys.push(rot.meta.new_key);
    rotations.push([rot.seq, rot.meta.new_key]);
    lastSeq = rot.seq;
  });
  passed(9);
  const cpKey = keys[keys.length - 1];
  if (!signedBy(cp, cpKey)) {
    throw new BundleError(10, "bad-checkpoint-signature", `the checkpoint is not signed by ${cpKey}, the key in force at size ${cp.size}`);
  }
  passed(10);
  const en = proved(obj.entry, "the memory", 11);
  const entry = entryOf(en.line, "the memory", 11);
  include(en, entry.seq, cp, "the memory", 11);
  passed(11);
  let key = keys[0];
  for (const [seq, newKey] of rotations) if (seq < entry.seq) key = newKey;
  signed(entry, key, "the memory", 12);
  passed(12);
  let content = null;
  if ("content" in obj) {
    content = typeof obj.content === "string" ? fromBase64(obj.content) : null;
    if (content === null) throw new BundleError(13, "malformed", "the content is not base64", entry.seq);
    if (entry.content === null || b3(content) !== entry.content) throw new BundleError(13, "content-mismatch", "the content does not hash to the memory's hash", entry.seq);
    if (content.length !== entry.size) throw new BundleError(13, "content-mismatch", `the content is not ${entry.size} bytes`, entry.seq);
    passed(13);
  }
  if (chainId !== null) {
    if (cid !== chainId) throw new BundleError(14, "chain-id-mismatch", `chain id ${cid} is not the pinned ${chainId}`);
    passed(14);
  }
  if (trustedKey !== null) {
    if (!keys.includes(trustedKey)) {
      throw new BundleError(15, "untrusted-key", `the trusted key ${trustedKey} is neither the genesis key ${keys[0]} nor a key this chain rotated to`);
    }
    passed(15);
  }
  const anchors = "anchors" in obj ? obj.anchors : [];
  if (!Array.isArray(anchors)) throw new BundleError(16, "malformed", "anchors must be a list");
  passed(16);
  return { chainId: cid, seq: entry.seq, entry, checkpoint: cp, key, keys, content, anchors };
}

// Section 15, steps 1-5. Bad input: not-a-consistency-proof and unpinned
// (step 1), bad-sizes (step 4).
export function verifyConsistencyFile(data, { trustedKey }) {
  const obj = parseJsonData(data);
  const bad = (step, message) => new BundleError(step, step === 4 ? "bad-sizes" : "not-a-consistency-proof", message);
  if (!isObject(obj) || obj.format !== CONSISTENCY_FORMAT) throw bad(1, `not a ${CONSISTENCY_FORMAT} file`);
  if (typeof obj.old !== "string" || typeof obj.new !== "string" || !Array.isArray(obj.proof)) throw bad(1, `not a ${CONSISTENCY_FORMAT} file`);
  let old, neu;
  try {
    old = parseCheckpoint(utf8.encode(obj.old));
    neu = parseCheckpoint(utf8.encode(obj.new));
  } catch (err) {
    if (err instanceof CheckpointError) throw bad(1, `a checkpoint does not parse: ${err.message}`);
    throw err;
  }
  const proof = obj.proof.map((h) => fromHex(h));
  if (proof.some((h) => h === null)) throw bad(1, "proof hashes must be hex");
  if (trustedKey === null) throw new BundleError(1, "unpinned", "a consistency proof is checked against a key");
  for (const [cp, name] of [[old, "the old checkpoint"], [neu, "the new checkpoint"]]) {
    if (!signedBy(cp, trustedKey)) throw new BundleError(2, "checkpoint-signature", `${name} is not signed by the trusted key ${trustedKey}`);
  }
  if (old.origin !== neu.origin) throw new BundleError(3, "wrong-origin", "the two checkpoints are of different logs");
  if (old.size > neu.size) throw bad(4, `the old checkpoint (${old.size}) is larger than the new one (${neu.size})`);
  try {
    verifyConsistency(old.size, neu.size, proof, old.root, neu.root);
  } catch (err) {
    if (err instanceof ProofError) throw new BundleError(5, "inconsistent", `the checkpoint of size ${neu.size} does not extend the one of size ${old.size}: ${err.message}`);
    throw err;
  }
  return { oldSize: old.size, newSize: neu.size };
}
