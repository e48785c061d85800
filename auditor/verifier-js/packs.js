// Content packs (FORMAT.md 6.1, 6.4): the blobs of a data directory, read
// from pack files' bytes alone (no hints needed: deleting them loses
// nothing). A record is state (1) | digest (32) | n (4, big-endian) | bytes
// (n) | n (4); a file that does not start with the magic holds none.
import { blake3 } from "./crypto.js";
import { toHex } from "./bytes.js";

const MAGIC = new TextEncoder().encode("MCPACK1\n");
const LIVE = 0x4c;
const ERASED = 0x45;
const HEAD = 37;

function u32(bytes, at) {
  return ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0;
}

function equal(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// The record framed at `at` (state L or E, both lengths agree, inside the
// file), or null.
function framed(data, at) {
  if (at + HEAD + 4 > data.length) return null;
  const state = data[at];
  if (state !== LIVE && state !== ERASED) return null;
  const n = u32(data, at + 33);
  const end = at + HEAD + n;
  if (end + 4 > data.length || u32(data, end) !== n) return null;
  return { state, digest: data.subarray(at + 1, at + 33), bytes: data.subarray(at + HEAD, end), end: end + 4 };
}

// Scan packs (their bytes, in pack-number order): digest hex -> the bytes of
// a sound live record, and digest hex -> the bytes of an altered one (a
// framed live record whose bytes do not hash to its digest). The scan moves
// past a sound record, and by one byte anywhere else (6.1).
export function scanPacks(packs) {
  const sound = new Map();
  const altered = new Map();
  for (const data of packs) {
    if (data.length < MAGIC.length || !equal(data.subarray(0, MAGIC.length), MAGIC)) continue;
    let at = MAGIC.length;
    while (at < data.length) {
      const rec = framed(data, at);
      if (rec !== null && (rec.state === ERASED || equal(blake3(rec.bytes), rec.digest))) {
        if (rec.state === LIVE) {
          const key = toHex(rec.digest);
          if (!sound.has(key)) sound.set(key, rec.bytes);
        }
        at = rec.end;
        continue;
      }
      if (rec !== null && rec.state === LIVE) {
        const key = toHex(rec.digest);
        if (!altered.has(key)) altered.set(key, rec.bytes);
      }
      at += 1;
    }
  }
  return { sound, altered };
}

// The verifier's read of "b3:H" (6.1): a sound record, else the file of the
// layout before packs (loose(hex) -> bytes or null), else an altered record's
// bytes (step 10 then reports content-mismatch), else null.
export function packReader(packs, loose) {
  const { sound, altered } = scanPacks(packs);
  return (hash) => {
    const key = hash.slice(3);
    return sound.get(key) ?? loose(key) ?? altered.get(key) ?? null;
  };
}
