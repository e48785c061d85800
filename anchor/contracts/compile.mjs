#!/usr/bin/env node
// Compile MemoryChainAnchors.sol with the pinned solc-js (package.json: solc 0.8.28) and write
// MemoryChainAnchors.json beside it, byte for byte the same on every run and machine.
//
//   node anchor/contracts/compile.mjs            write anchor/contracts/MemoryChainAnchors.json
//   node anchor/contracts/compile.mjs --stdout   print the same bytes to stdout instead
//
// Run `npm ci` in the repository root first. The settings below are fixed: metadata is left out
// of the bytecode (bytecodeHash "none", appendCBOR false), so the bytecode depends only on the
// source text, the compiler version and these settings.

import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const CONTRACT_NAME = "MemoryChainAnchors";
const SOURCE_FILE = "MemoryChainAnchors.sol";
const ARTIFACT_FILE = "MemoryChainAnchors.json";
const SOLC_VERSION_PREFIX = "0.8.28";

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
  metadata: { bytecodeHash: "none", appendCBOR: false },
  outputSelection: {
    [SOURCE_FILE]: {
      [CONTRACT_NAME]: ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"],
    },
  },
};

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, "..", "..");

function fail(message) {
  process.stderr.write(`compile.mjs: ${message}\n`);
  process.exit(1);
}

// Sort object keys recursively; arrays keep their order.
function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key]);
    return out;
  }
  return value;
}

const args = process.argv.slice(2);
const toStdout = args.length === 1 && args[0] === "--stdout";
if (args.length > 1 || (args.length === 1 && !toStdout)) {
  fail(`usage: node compile.mjs [--stdout] (got: ${args.join(" ")})`);
}

// Resolve solc from the repository root's node_modules, whatever the current directory is.
const requireFromRoot = createRequire(join(repoRoot, "package.json"));
let solc;
try {
  solc = requireFromRoot("solc");
} catch (err) {
  fail(`cannot load solc from ${join(repoRoot, "node_modules")}: run \`npm ci\` in ${repoRoot} (${err.message})`);
}

const version = solc.version();
if (!version.startsWith(SOLC_VERSION_PREFIX)) {
  fail(`solc ${version} found, ${SOLC_VERSION_PREFIX} required: run \`npm ci\` in ${repoRoot}`);
}

const source = readFileSync(join(here, SOURCE_FILE), "utf8");
const input = {
  language: "Solidity",
  sources: { [SOURCE_FILE]: { content: source } },
  settings: SETTINGS,
};

const output = JSON.parse(
  solc.compile(JSON.stringify(input), {
    import: (path) => ({ error: `imports are not supported (${path})` }),
  }),
);

const diagnostics = output.errors ?? [];
for (const d of diagnostics) {
  if (d.severity !== "error") process.stderr.write(d.formattedMessage ?? d.message);
}
const errors = diagnostics.filter((d) => d.severity === "error");
if (errors.length > 0) {
  fail(`solc ${version} failed:\n${errors.map((d) => d.formattedMessage ?? d.message).join("\n")}`);
}

const contract = output.contracts?.[SOURCE_FILE]?.[CONTRACT_NAME];
const bytecode = contract?.evm?.bytecode?.object;
const deployedBytecode = contract?.evm?.deployedBytecode?.object;
if (!contract || !bytecode || !deployedBytecode) {
  fail(`solc ${version} produced no bytecode for ${CONTRACT_NAME} in ${SOURCE_FILE}`);
}

const artifact = sortKeys({
  contractName: CONTRACT_NAME,
  compiler: { version, settings: SETTINGS },
  sourceFile: SOURCE_FILE,
  abi: contract.abi,
  bytecode: `0x${bytecode}`,
  deployedBytecode: `0x${deployedBytecode}`,
});
const text = `${JSON.stringify(artifact, null, 2)}\n`;

if (toStdout) {
  process.stdout.write(text);
} else {
  writeFileSync(join(here, ARTIFACT_FILE), text);
}
