// agent:bootstrap: the memory-chain session block takes the place of MEMORY.md
// in the files OpenClaw injects at agent start (MEMORY.md merged across
// scopes, the chain's provable memories, recent daily notes), so the agent
// starts with its memory. Only where OpenClaw loads MEMORY.md (the main
// private session) or, when the workspace has none yet, in a main session.
import { join } from "node:path";
import { runHook } from "./memory-chain.js";

const TIMEOUT_MS = 10000;

export default async function handler(event) {
  if (!event || event.type !== "agent" || event.action !== "bootstrap") return;
  const ctx = event.context ?? {};
  if (!Array.isArray(ctx.bootstrapFiles)) return;
  const at = ctx.bootstrapFiles.findIndex((f) => f && f.name === "MEMORY.md");
  const main = typeof event.sessionKey === "string" && event.sessionKey.endsWith(":main");
  if (at < 0 && !main) return;
  const block = await runHook(
    "agent:bootstrap",
    { workspaceDir: ctx.workspaceDir, sessionId: ctx.sessionId, agentId: ctx.agentId },
    TIMEOUT_MS,
  );
  if (!block.trim()) return;
  const path = at >= 0 ? ctx.bootstrapFiles[at].path : join(ctx.workspaceDir ?? ".", "MEMORY.md");
  const record = { name: "MEMORY.md", path, missing: false, content: block };
  if (at >= 0) ctx.bootstrapFiles[at] = { ...ctx.bootstrapFiles[at], ...record };
  else ctx.bootstrapFiles.push(record);
}
