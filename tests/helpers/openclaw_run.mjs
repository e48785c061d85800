// Runs an OpenClaw internal hook handler on a recorded event, as the Gateway does:
//   node openclaw_run.mjs HANDLER.js EVENT.json
// The event's timestamp is revived as a Date; after the handler resolves, the
// event (context and messages) is printed as JSON on stdout.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [handlerPath, eventPath] = process.argv.slice(2);
const event = JSON.parse(readFileSync(eventPath, "utf8"));
event.timestamp = new Date(event.timestamp);
const { default: handler } = await import(pathToFileURL(handlerPath).href);
const returned = await handler(event);
process.stdout.write(JSON.stringify({ returned: returned ?? null, event }));
