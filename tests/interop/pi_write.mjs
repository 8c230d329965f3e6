// Writes a session with Pi's own SessionManager: branches, labels, a branch summary, a
// compaction, custom entries and messages, model and thinking-level changes, a session
// name.  Prints the file's path.  Used by tests/test_pi_interop.py.
//
//   node pi_write.mjs <pi-coding-agent package dir> <directory>
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, dir] = process.argv.slice(2);
const { SessionManager } = await import(
  pathToFileURL(join(pkgDir, "dist", "core", "session-manager.js")).href
);

let clock = Date.UTC(2026, 0, 1);
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: ++clock });
const assistant = (text, provider = "anthropic", model = "claude-sonnet-4-5") => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "anthropic-messages",
  provider,
  model,
  usage: { input: 10, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 30,
           cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop",
  timestamp: ++clock,
});

const sm = SessionManager.create("/work/demo", dir);
const q = sm.appendMessage(user("Which plan?"));
sm.appendThinkingLevelChange("high");
const a = sm.appendMessage(assistant("Plan A."));
sm.appendLabelChange(a, "plan A");
sm.appendModelChange("openai", "gpt-5.1-codex");
const q2 = sm.appendMessage(user("Details?"));
sm.appendMessage(assistant("A, step by step.", "openai", "gpt-5.1-codex"));
// Back to the question: a second answer, as a branch.
sm.branch(q);
const b = sm.appendMessage(assistant("Plan B."));
sm.appendLabelChange(q, "the question");
// Back to plan A's details, with a summary of the abandoned branch B.
sm.branchWithSummary(q2, "Tried plan B; it was worse.", { files: ["b.md"] });
sm.appendCustomEntry("my-extension", { counter: 1 });
sm.appendCustomMessageEntry("my-extension", "Injected note.", true, { why: "test" });
sm.appendCustomMessageEntry("my-extension", [{ type: "text", text: "Hidden." }], false);
sm.appendMessage(user("Go on."));
sm.appendMessage(assistant("Going on."));
sm.appendCompaction("Everything so far: plan A, details.", q2, 4242, { readFiles: [] });
sm.appendMessage(user("After the compaction."));
sm.appendSessionInfo("  Interop demo  ");
sm.appendLabelChange(q, "");
sm.appendLabelChange(b, "plan B");
sm.appendMessage(assistant("Done."));
process.stdout.write(JSON.stringify({ file: sm.getSessionFile() }));
