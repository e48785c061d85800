// The three primitives, from audited libraries: BLAKE3 (entry hashes,
// content, the Merkle tree), SHA-256 (signed-note key hashes) and Ed25519
// with exactly libsodium's acceptance rules (FORMAT.md 3.5).
import { blake3 } from "@noble/hashes/blake3.js";
import { sha256, sha512 } from "@noble/hashes/sha2.js";
import { ed25519 } from "@noble/curves/ed25519.js";
import { concat, fromHex, toHex } from "./bytes.js";

export { blake3, sha256 };

// "b3:" + 64 hex (FORMAT.md section 1).
export function b3(bytes) {
  return "b3:" + toHex(blake3(bytes));
}

const Point = ed25519.Point;
const L = Point.Fn.ORDER;
// The base point without noble's 8-bit window table, for the first few
// checks: a proof bundle holds a handful of signatures, and building the
// table (thousands of point additions) costs more than those checks
// together. A whole chain then uses the table, which pays for itself.
const PLAIN_BASE = Point.fromAffine(Point.BASE.toAffine());
const PLAIN_CHECKS = 16;
let checks = 0;

function littleEndian(bytes) {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]);
  return n;
}

// libsodium's crypto_sign_verify_detached, on noble's point arithmetic:
// S < L; A canonical, on the curve and not of small order; R canonical and
// not of small order; then the cofactorless equation [S]B = R + [k]A.
// (noble's own verify is cofactored and accepts a small-order R.)
export function ed25519Verify(publicKey, message, signature) {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const rBytes = signature.subarray(0, 32);
  const s = littleEndian(signature.subarray(32));
  if (s >= L) return false;
  let A, R;
  try {
    A = Point.fromBytes(publicKey, false);
    R = Point.fromBytes(rBytes, false);
  } catch {
    return false;
  }
  if (A.isSmallOrder() || R.isSmallOrder()) return false;
  const k = littleEndian(sha512(concat(rBytes, publicKey, message))) % L;
  const base = checks++ < PLAIN_CHECKS ? PLAIN_BASE : Point.BASE;
  const sB = base.multiplyUnsafe(s);
  return sB.equals(R.add(A.multiplyUnsafe(k)));
}

// A key id "ed25519:<64 hex>" and a 128-hex signature, both already
// checked for form by the caller.
export function verifySig(keyId, message, sigHex) {
  const pub = fromHex(keyId.slice(8));
  const sig = fromHex(sigHex);
  if (pub === null || sig === null) return false;
  return ed25519Verify(pub, message, sig);
}
