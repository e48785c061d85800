// command:new, command:reset, session:auto-reset: before the session is
// dropped, memory-chain captures what is worth remembering from its
// transcript into today's daily file (and a "remember this" into MEMORY.md).
import { runHook } from "./memory-chain.js";

const TIMEOUT_MS = 30000;
const EVENTS = new Set(["command:new", "command:reset", "session:auto-reset"]);

export default async function handler(event) {
  if (!event) return;
  const key = `${event.type}:${event.action}`;
  if (!EVENTS.has(key)) return;
  await runHook(key, { ...(event.context ?? {}), sessionKey: event.sessionKey }, TIMEOUT_MS);
}
