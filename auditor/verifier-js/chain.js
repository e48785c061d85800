// Verifying a chain's lines: steps 1-13 of FORMAT.md 5.1, in the order
// of 5.3, reporting the first failure as 5.4 does.
import { equal, toHex } from "./bytes.js";
import { b3, verifySig } from "./crypto.js";
import { Malformed, parseLine, rotationMessage, signingMessage } from "./entry.js";
import { Frontier, leafHash } from "./merkle.js";
import { originOf, signedBy } from "./checkpoint.js";

export class Failure {
  constructor(seq, step, reason, message) {
    this.seq = seq;
    this.step = step;
    this.reason = reason;
    this.message = message;
  }
}

// Split bytes on 0x0A: complete lines (without "\n") and the torn tail.
export function splitLines(bytes) {
  const lines = [];
  let start = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, start)) {
    lines.push(bytes.subarray(start, i));
    start = i + 1;
  }
  return { lines, tail: bytes.subarray(start) };
}

// What the stateful steps carry from one line to the next (5.3).
export class ChainState {
  constructor({ trustedKey = null, chainId = null, checkpoints = [] } = {}) {
    this.size = 0;
    this.head = null;
    this.ts = "";
    this.key = null;
    this.chainId = null;
    this.trustedKey = trustedKey;
    this.pinnedChainId = chainId;
    this.keys = [];
    this.entries = new Map(); // seq -> {content, committed, redacted}
    this.pending = new Map(); // seq -> content hash of an absent blob
    this.frontier = new Frontier();
    this.checkpoints = new Map(); // size -> [checkpoint], in the order given
    for (const cp of checkpoints) {
      if (cp.size < 1) continue; // commits to nothing (5.1 step 13)
      const list = this.checkpoints.get(cp.size) ?? [];
      list.push(cp);
      this.checkpoints.set(cp.size, list);
    }
  }

  // Steps 1-11 and 13 for one complete line at position this.size.
  // `blobs` is null (lines alone: step 10 skipped) or seq-free getter hash -> bytes|null.
  apply(line, blobs) {
    const p = this.size;
    let e;
    try {
      e = parseLine(line);
    } catch (err) {
      if (err instanceof Malformed) return new Failure(p, err.step, err.reason, err.message);
      throw err;
    }
    if (e.seq !== p) return new Failure(p, 4, "seq-gap", `expected seq ${p}, found seq ${e.seq}`);
    if (e.prev !== this.head) return new Failure(p, 5, "broken-link", `prev ${e.prev} is not the hash of the line before, ${this.head}`);
    if (e.ts < this.ts) return new Failure(p, 6, "time-backwards", `ts ${e.ts} is earlier than the line before's ${this.ts}`);
    if (p > 0 && e.key !== this.key) return new Failure(p, 7, "unknown-key", `signed by ${e.key}, not the current key ${this.key}`);
    if (!verifySig(e.key, signingMessage(e), e.sig)) return new Failure(p, 8, "bad-signature", "the signature does not verify");
    if (e.type === "key-rotation") {
      if (e.meta.new_key === e.key) return new Failure(p, 9, "invalid-rotation", "the new key is the current key");
      if (!verifySig(e.meta.new_key, rotationMessage(e), e.meta.new_sig)) {
        return new Failure(p, 9, "invalid-rotation", "new_sig does not verify by the new key");
      }
    }
    if (e.type === "redaction") {
      const problem = this.redactionProblem(e, p);
      if (problem !== null) return new Failure(p, 9, "invalid-redaction", problem);
    }
    if (e.content !== null && blobs !== null) {
      const blob = blobs(e.content);
      if (blob === null) this.pending.set(p, e.content);
      else if (b3(blob) !== e.content || blob.length !== e.size) {
        return new Failure(p, 10, "content-mismatch", `the content does not hash to ${e.content} or is not ${e.size} bytes`);
      }
    }
    const hash = b3(line);
    if (p === 0 && this.pinnedChainId !== null && hash !== this.pinnedChainId) {
      return new Failure(0, 11, "chain-id-mismatch", `chain id ${hash} is not the pinned ${this.pinnedChainId}`);
    }
    // The line is accepted: advance the state.
    this.size = p + 1;
    this.head = hash;
    this.ts = e.ts;
    if (p === 0) {
      this.chainId = hash;
      this.key = e.key;
      this.keys.push(e.key);
    }
    if (e.type === "key-rotation") {
      this.key = e.meta.new_key;
      this.keys.push(this.key);
    }
    this.entries.set(p, { content: e.content, committed: e.tier === "committed", redacted: false, type: e.type });
    if (e.type === "redaction") {
      this.entries.get(e.meta.target).redacted = true;
      this.pending.delete(e.meta.target);
    }
    this.frontier.append(leafHash(line));
    return this.checkCheckpoints(p + 1);
  }

  redactionProblem(e, p) {
    const t = e.meta.target;
    if (t >= p) return `the target ${t} is not an earlier entry`;
    const target = this.entries.get(t);
    if (target === undefined || target.content === null) return `entry ${t} has no content to redact`;
    if (target.committed) return `entry ${t} is committed`;
    if (target.redacted) return `entry ${t} is already redacted`;
    if (target.content !== e.meta.content) return `the redaction names ${e.meta.content}, not entry ${t}'s content`;
    return null;
  }

  // Step 13 for the checkpoints of size n, once n lines are accepted.
  checkCheckpoints(n) {
    for (const cp of this.checkpoints.get(n) ?? []) {
      if (!signedBy(cp, this.key)) {
        return new Failure(n - 1, 13, "checkpoint-signature", `the checkpoint of size ${n} is not signed by ${this.key}`);
      }
      if (cp.origin !== originOf(this.chainId)) {
        return new Failure(n - 1, 13, "checkpoint-origin", `the checkpoint's origin ${cp.origin} is not this chain's`);
      }
      if (!equal(cp.root, this.frontier.root())) {
        return new Failure(n - 1, 13, "rewritten", `the first ${n} lines do not have the root the checkpoint signed`);
      }
    }
    return null;
  }

  // The end checks of 5.3, in order.
  finish(withBlobs) {
    if (this.size === 0) return new Failure(0, 12, "empty-chain", "the chain has no complete line");
    if (this.trustedKey !== null && this.size > 0 && !this.keys.includes(this.trustedKey)) {
      return new Failure(0, 7, "untrusted-key", `the trusted key ${this.trustedKey} is neither the genesis key nor a key this chain rotated to`);
    }
    let largest = null;
    for (const size of this.checkpoints.keys()) if (size > this.size && (largest === null || size > largest)) largest = size;
    if (largest !== null) {
      return new Failure(this.size, 13, "truncated", `chain has ${this.size} entries; a checkpoint commits to ${largest}`);
    }
    if (withBlobs && this.pending.size > 0) {
      const seq = Math.min(...this.pending.keys());
      return new Failure(seq, 12, "missing-content", `the content of entry ${seq} is missing and no redaction names it`);
    }
    return null;
  }

  report(failure, tornTail) {
    return {
      ok: failure === null,
      entries: this.size,
      head: this.head,
      chain_id: this.chainId,
      key: this.key,
      root: failure === null ? toHex(this.frontier.root()) : null,
      torn_tail_bytes: failure === null ? tornTail : 0,
      failure: failure === null ? null : { seq: failure.seq, step: failure.step, reason: failure.reason, message: failure.message },
    };
  }
}

// Verify a whole chain file's bytes (5.1-5.5). `blobs`: hash -> bytes|null, or null.
export function verifyChain(bytes, { trustedKey = null, chainId = null, checkpoints = [], blobs = null, onProgress = null } = {}) {
  const { lines, tail } = splitLines(bytes);
  const state = new ChainState({ trustedKey, chainId, checkpoints });
  for (let i = 0; i < lines.length; i++) {
    const failure = state.apply(lines[i], blobs);
    if (failure !== null) return state.report(failure, 0);
    if (onProgress !== null && i % 256 === 255) onProgress(i + 1, lines.length);
  }
  return state.report(state.finish(blobs !== null), tail.length);
}
