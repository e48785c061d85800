// The RFC 9162 Merkle tree with BLAKE3 (FORMAT.md section 10).
import { concat, equal } from "./bytes.js";
import { blake3 } from "./crypto.js";

export class ProofError extends Error {}

const LEAF = new Uint8Array([0]);
const NODE = new Uint8Array([1]);

export const leafHash = (line) => blake3(concat(LEAF, line));
export const nodeHash = (left, right) => blake3(concat(NODE, left, right));
export const EMPTY_ROOT = blake3(new Uint8Array(0));

// 10.5: the roots of the perfect subtrees, largest first.
export class Frontier {
  constructor() {
    this.nodes = [];
    this.size = 0;
  }
  append(leaf) {
    let carry = leaf;
    for (let k = this.size; k % 2 === 1; k = Math.floor(k / 2)) carry = nodeHash(this.nodes.pop(), carry);
    this.nodes.push(carry);
    this.size += 1;
  }
  root() {
    if (this.nodes.length === 0) return EMPTY_ROOT;
    let r = this.nodes[this.nodes.length - 1];
    for (let i = this.nodes.length - 2; i >= 0; i--) r = nodeHash(this.nodes[i], r);
    return r;
  }
}

const bitLength = (n) => (n === 0n ? 0 : n.toString(2).length);
const popcount = (n) => [...n.toString(2)].filter((c) => c === "1").length;

// 10.2, in its order of rejections. Sizes are BigInt-safe (a checkpoint
// size may be up to 2^63 - 1).
export function verifyInclusion(index, size, leaf, proof, root) {
  let fn = BigInt(index);
  let sn = BigInt(size);
  if (fn >= sn) throw new ProofError(`index ${index} is not below the tree size ${size}`);
  if (leaf.length !== 32 || root.length !== 32 || proof.some((p) => p.length !== 32)) {
    throw new ProofError("a hash is not 32 bytes");
  }
  sn -= 1n;
  const inner = bitLength(fn ^ sn);
  const border = popcount(fn >> BigInt(inner));
  if (proof.length !== inner + border) {
    throw new ProofError(`the proof has ${proof.length} hashes; it needs ${inner + border}`);
  }
  let r = leaf;
  for (const p of proof) {
    if ((fn & 1n) === 1n || fn === sn) {
      r = nodeHash(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else r = nodeHash(r, p);
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n || !equal(r, root)) throw new ProofError("the proof does not lead to the root");
}

// 10.3, in its order.
export function verifyConsistency(size1, size2, proof, root1, root2) {
  let fn = BigInt(size1);
  let sn = BigInt(size2);
  if (fn < 1n) throw new ProofError("a proof from the empty tree proves nothing");
  if (fn > sn) throw new ProofError(`size ${size1} is larger than ${size2}`);
  if (fn === sn) {
    if (proof.length !== 0) throw new ProofError("equal sizes need an empty proof");
    if (!equal(root1, root2)) throw new ProofError("equal sizes with different roots");
    return;
  }
  if (root1.length !== 32 || root2.length !== 32 || proof.some((p) => p.length !== 32)) {
    throw new ProofError("a hash is not 32 bytes");
  }
  if (proof.length === 0) throw new ProofError("the proof is empty");
  const path = (fn & (fn - 1n)) === 0n ? [root1, ...proof] : proof;
  fn -= 1n;
  sn -= 1n;
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0n) throw new ProofError("the proof is too long");
    if ((fn & 1n) === 1n || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else sr = nodeHash(sr, c);
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new ProofError("the proof is too short");
  if (!equal(fr, root1)) throw new ProofError("the proof does not lead to the old root");
  if (!equal(sr, root2)) throw new ProofError("the proof does not lead to the new root");
}
