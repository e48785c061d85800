// Reading cases from files under node (cli.mjs); the browser page reads
// dropped files instead. One result shape for every kind.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { toHex } from "./bytes.js";
import { parseCheckpoint } from "./checkpoint.js";
import { verifyChain } from "./chain.js";
import { BundleError, verifyBundle, verifyConsistencyFile } from "./bundle.js";
import { verifyArchive } from "./archive.js";
import { packReader } from "./packs.js";

const failed = (f) => ({ ok: false, step: f.step, reason: f.reason, seq: f.seq, message: f.message });

function chainCase(c) {
  const dir = statSync(c.path).isDirectory() ? c.path : null;
  const bytes = readFileSync(dir === null ? c.path : join(dir, "chain.jsonl"));
  const checkpoints = c.checkpoints.map((p) => parseCheckpoint(readFileSync(p)));
  const blobs = dir === null ? null : contentOf(dir);
  const r = verifyChain(new Uint8Array(bytes), { trustedKey: c.trusted_key, chainId: c.chain_id, checkpoints, blobs });
  return r.ok ? { ok: true, step: null, reason: null, seq: null, message: null, entries: r.entries, head: r.head, root: r.root } : failed(r.failure);
}

// A data directory's content (FORMAT.md 6): its packs, then one file per blob.
function contentOf(dir) {
  const packsDir = join(dir, "content", "packs");
  const names = existsSync(packsDir) ? readdirSync(packsDir).filter((n) => /^[0-9]{8}\.pack$/.test(n)).sort() : [];
  const packs = names.map((n) => new Uint8Array(readFileSync(join(packsDir, n))));
  const loose = (hex) => {
    const file = join(dir, "content", hex.slice(0, 2), hex.slice(2));
    return existsSync(file) ? new Uint8Array(readFileSync(file)) : null;
  };
  return packReader(packs, loose);
}

function bundleCase(c) {
  try {
    const p = verifyBundle(new Uint8Array(readFileSync(c.path)), { trustedKey: c.trusted_key, chainId: c.chain_id });
    return { ok: true, step: null, reason: null, seq: p.seq, message: null, chain_id: p.chainId, key: p.key, tree_size: Number(p.checkpoint.size), root: toHex(p.checkpoint.root) };
  } catch (err) {
    if (err instanceof BundleError) return failed(err);
    throw err;
  }
}

function consistencyCase(c) {
  try {
    const r = verifyConsistencyFile(new Uint8Array(readFileSync(c.path)), { trustedKey: c.trusted_key });
    return { ok: true, step: null, reason: null, seq: null, message: null, old_size: r.oldSize, new_size: r.newSize };
  } catch (err) {
    if (err instanceof BundleError) return failed(err);
    throw err;
  }
}

async function archiveCase(c) {
  const r = await verifyArchive(new Uint8Array(readFileSync(c.path)), { trustedKey: c.trusted_key, chainId: c.chain_id });
  return r.ok ? { ok: true, step: null, reason: null, seq: null, message: null, entries: r.entries, head: r.head } : failed(r.failure);
}

const KINDS = { chain: chainCase, bundle: bundleCase, consistency: consistencyCase, archive: archiveCase };

export async function verifyPath(c) {
  const kind = KINDS[c.kind];
  if (kind === undefined) throw new Error(`unknown kind ${c.kind}`);
  return await kind({ trusted_key: null, chain_id: null, checkpoints: [], ...c });
}
