#!/usr/bin/env node
// Builds auditor/page.html: verifier-js/page.html with the verifier and
// the pinned @noble libraries bundled in by esbuild (one inline script,
// nothing fetched). The output is committed; tests/test_auditor_page.py
// checks that this build reproduces it byte for byte.
//   node auditor/build.mjs [--check]
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const result = await build({
  entryPoints: [join(here, "verifier-js", "page.js")],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  legalComments: "none",
  charset: "utf8",
  write: false,
});
const script = result.outputFiles[0].text.trim();
if (/<\/script/i.test(script) || script.includes("<!--")) throw new Error("the bundle cannot be inlined");
const template = readFileSync(join(here, "verifier-js", "page.html"), "utf8");
const page = template.replace("/*VERIFIER*/", () => script);
const out = join(here, "page.html");
if (process.argv.includes("--check")) {
  const same = readFileSync(out, "utf8") === page;
  process.stdout.write(same ? "auditor/page.html is current\n" : "auditor/page.html is out of date: run node auditor/build.mjs\n");
  process.exitCode = same ? 0 : 1;
} else {
  writeFileSync(out, page);
  process.stdout.write(`wrote ${out} (${Buffer.byteLength(page)} bytes)\n`);
}
