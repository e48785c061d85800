// Signed checkpoints: C2SP tlog-checkpoint in a C2SP signed note
// (FORMAT.md section 11).
import { concat, decodeUtf8, fromBase64, fromHex, toHex, utf8 } from "./bytes.js";
import { ed25519Verify, sha256 } from "./crypto.js";

export class CheckpointError extends Error {}

export const MAX_NOTE_BYTES = 65536;
const SIZE_RE = /^(0|[1-9][0-9]{0,19})$/;
// Python's \s (str.isspace), which the reference's [^\s+]+ means.
const NAME_RE = /^[^+\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/u;
const EM_DASH = "\u2014 ";

// 11.3, in its order. `bytes` is the note's UTF-8.
export function parseCheckpoint(bytes) {
  if (bytes.length > MAX_NOTE_BYTES) throw new CheckpointError(`a note is at most ${MAX_NOTE_BYTES} bytes`);
  let text;
  try {
    text = decodeUtf8(bytes);
  } catch {
    throw new CheckpointError("the note is not UTF-8");
  }
  if (text.includes("\r") || !text.endsWith("\n")) throw new CheckpointError("the note has a CR or does not end with a newline");
  const split = text.lastIndexOf("\n\n");
  if (split < 0) throw new CheckpointError("the note has no blank line before its signatures");
  const body = text.slice(0, split + 1);
  const block = text.slice(split + 2);
  const lines = body.slice(0, -1).split("\n");
  if (lines.length < 3 || lines.some((l) => l === "")) throw new CheckpointError("the note needs an origin, a size and a root");
  const [origin, sizeLine, rootLine] = lines;
  if (!SIZE_RE.test(sizeLine) || BigInt(sizeLine) >= 1n << 63n) throw new CheckpointError(`bad tree size ${JSON.stringify(sizeLine)}`);
  const root = fromBase64(rootLine);
  if (root === null || root.length !== 32) throw new CheckpointError("the root is not the base64 of 32 bytes");
  const signatures = [];
  for (const line of block.slice(0, -1).split("\n")) {
    if (!line.startsWith(EM_DASH)) throw new CheckpointError("a signature line must start with an em dash and a space");
    const rest = line.slice(EM_DASH.length);
    const space = rest.indexOf(" ");
    const name = space < 0 ? rest : rest.slice(0, space);
    const b64 = space < 0 ? "" : rest.slice(space + 1);
    if (!NAME_RE.test(name)) throw new CheckpointError("bad key name in a signature line");
    const raw = fromBase64(b64);
    if (raw === null || raw.length < 5) throw new CheckpointError("bad signature in a signature line");
    signatures.push({ name, keyHash: raw.subarray(0, 4), sig: raw.subarray(4) });
  }
  if (signatures.length === 0) throw new CheckpointError("the note has no signature");
  const size = BigInt(sizeLine);
  return {
    bytes,
    text,
    origin,
    size: size <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(size) : size,
    root,
    signedText: utf8.encode(body),
    signatures,
    chainId: /^memory-chain\/[0-9a-f]{64}$/.test(origin) ? "b3:" + origin.slice(13) : null,
  };
}

export const originOf = (chainId) => "memory-chain/" + chainId.slice(3);

// 11.2: the first 4 bytes of SHA-256(name || 0x0A || 0x01 || public key).
export function keyHash(name, publicKey) {
  return sha256(concat(utf8.encode(name + "\n"), new Uint8Array([1]), publicKey)).subarray(0, 4);
}

export function signedBy(cp, keyId) {
  const pub = fromHex(keyId.slice(8));
  const kh = toHex(keyHash(cp.origin, pub));
  return cp.signatures.some(
    (s) => s.name === cp.origin && toHex(s.keyHash) === kh && s.sig.length === 64 && ed25519Verify(pub, cp.signedText, s.sig),
  );
}
