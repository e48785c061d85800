#!/usr/bin/env node
// The JavaScript verifier from a shell, for tests and for auditors with
// node but no Python. Prints one JSON object per case: ok, step, reason,
// seq, message (and what was proved).
//
//   node cli.mjs chain DIR_OR_CHAIN_FILE [--trusted-key K] [--chain-id C] [--checkpoint FILE]...
//   node cli.mjs bundle FILE [--trusted-key K] [--chain-id C]
//   node cli.mjs consistency FILE --trusted-key K
//   node cli.mjs archive FILE [--trusted-key K] [--chain-id C]
//   node cli.mjs batch CASES.json      (a list of {kind, path, trusted_key, chain_id, checkpoints})
import { readFileSync } from "node:fs";
import { verifyPath } from "./node-files.js";

function parseArgs(argv) {
  const [kind, path, ...rest] = argv;
  const c = { kind, path, trusted_key: null, chain_id: null, checkpoints: [] };
  for (let i = 0; i < rest.length; i += 2) {
    const [flag, value] = [rest[i], rest[i + 1]];
    if (flag === "--trusted-key") c.trusted_key = value;
    else if (flag === "--chain-id") c.chain_id = value;
    else if (flag === "--checkpoint") c.checkpoints.push(value);
    else throw new Error(`unknown option ${flag}`);
  }
  return c;
}

const args = process.argv.slice(2);
if (args[0] === "batch") {
  const cases = JSON.parse(readFileSync(args[1], "utf8"));
  const results = [];
  for (const c of cases) results.push(await verifyPath(c));
  process.stdout.write(JSON.stringify(results) + "\n");
} else {
  const result = await verifyPath(parseArgs(args));
  process.stdout.write(JSON.stringify(result) + "\n");
  process.exitCode = result.ok ? 0 : 1;
}
