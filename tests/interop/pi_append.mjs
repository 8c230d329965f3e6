// Opens a session file with Pi's SessionManager, appends a user and an assistant
// message under Pi's leaf, and prints what Pi then sees (as pi_read.mjs does).
//
//   node pi_append.mjs <pi-coding-agent package dir> <file>
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, file] = process.argv.slice(2);
const { SessionManager } = await import(
  pathToFileURL(join(pkgDir, "dist", "core", "session-manager.js")).href
);
const { view } = await import(pathToFileURL(join(import.meta.dirname, "pi_read.mjs")).href);

const sm = SessionManager.open(file);
sm.appendMessage({ role: "user", content: [{ type: "text", text: "From Pi." }], timestamp: 1 });
sm.appendMessage({
  role: "assistant", content: [{ type: "text", text: "Pi answers." }], provider: "anthropic",
  model: "claude-opus-4-5", api: "anthropic-messages", stopReason: "stop", timestamp: 2,
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
           cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
});
process.stdout.write(JSON.stringify(view(SessionManager.open(file))));
