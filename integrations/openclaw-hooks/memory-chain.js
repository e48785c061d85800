// Runs `memory-chain hook EVENT` with the event's context as JSON on stdin.
// Shared by the memory-chain OpenClaw hooks (the installer copies it next to
// each handler, with command.json: {"argv": [program, ...]}).
// Never throws: a memory hook must not break the agent. A failure is one
// line on stderr and an empty answer.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));

function program() {
  const { argv } = JSON.parse(readFileSync(join(HERE, "command.json"), "utf8"));
  if (!Array.isArray(argv) || argv.length === 0) throw new Error("command.json has no argv");
  return argv;
}

// Only plain data leaves the process: the context's cfg and anything that
// is not JSON are dropped.
export function plain(value, depth = 0) {
  if (value === null || ["string", "number", "boolean"].includes(typeof value)) return value;
  if (depth > 4 || typeof value !== "object") return undefined;
  if (Array.isArray(value)) return value.map((v) => plain(v, depth + 1)).filter((v) => v !== undefined);
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "cfg") continue;
    const p = plain(v, depth + 1);
    if (p !== undefined) out[k] = p;
  }
  return out;
}

export function runHook(event, input, timeoutMs) {
  return new Promise((resolve) => {
    let argv;
    try {
      argv = program();
    } catch (err) {
      console.error(`[memory-chain] ${event}: ${err.message}`);
      resolve("");
      return;
    }
    const child = execFile(
      argv[0],
      [...argv.slice(1), "hook", event],
      { timeout: timeoutMs, maxBuffer: 4 << 20, encoding: "utf8" },
      (err, stdout, stderr) => {
        if (stderr && stderr.trim()) console.error(stderr.trim().split("\n")[0]);
        if (err) {
          console.error(`[memory-chain] ${event}: ${err.killed ? "timed out" : err.message.split("\n")[0]}`);
          resolve("");
          return;
        }
        resolve(stdout);
      },
    );
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(plain(input) ?? {}));
  });
}
