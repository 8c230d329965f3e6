// Runs Pi 1.6's own session code (@earendil-works/pi-coding-agent) on a batch of jobs read
// as JSON from stdin, and prints one JSON result per job.  Used by tests/test_pi16.py.
//
//   node pi16.mjs <pi-coding-agent package dir> < jobs.json
//
// The package's index needs Node >= 22.19, but its session manager and messages modules
// run on Node 20 when imported by file path (the very modules the index re-exports).
//
// Jobs:
//   {"entries": [...], "leaves": [id | null, ...]}  buildSessionContext on raw entries
//   {"open": file}        SessionManager.open(file): what Pi sees, context at every entry
//   {"write": dir, "ops": [...]}   Pi writes a session through its API (ops below), then
//                          each file it wrote is opened again as for "open"
// A context is {messages, thinkingLevel, model, llm: convertToLlm(messages)}.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir] = process.argv.slice(2);
const core = join(pkgDir, "dist", "core");
const sm = await import(pathToFileURL(join(core, "session-manager.js")).href);
const { convertToLlm } = await import(pathToFileURL(join(core, "messages.js")).href);
const { SessionManager, buildSessionContext } = sm;

function context(entries, leaf) {
  const ctx = buildSessionContext(entries, leaf);
  return { ...ctx, llm: convertToLlm(ctx.messages) };
}

function view(session) {
  const entries = session.getEntries();
  const labels = {};
  for (const entry of entries) {
    const label = session.getLabel(entry.id);
    if (label !== undefined) labels[entry.id] = label;
  }
  return {
    header: session.getHeader(),
    entries,
    leafId: session.getLeafId(),
    labels,
    name: session.getSessionName() ?? null,
    context: (() => {
      const ctx = session.buildSessionContext();
      return { ...ctx, llm: convertToLlm(ctx.messages) };
    })(),
    contexts: Object.fromEntries(entries.map((e) => [e.id, context(entries, e.id)])),
  };
}

function open(file) {
  try {
    return view(SessionManager.open(file));
  } catch (error) {
    return { error: String(error.message ?? error) };
  }
}

// Each op names earlier entries by their index among the ids made so far (modulo);
// an op Pi refuses (an edit off the branch, ...) is recorded as refused and skipped.
function write(dir, ops) {
  let session = SessionManager.create("/work/pi16", dir);
  const ids = [];
  const files = new Set();
  const results = [];
  const ref = (k) => (k === null || ids.length === 0 ? null : ids[k % ids.length]);
  for (const [name, ...a] of ops) {
    let id = null;
    try {
      switch (name) {
        case "message": id = session.appendMessage(a[0]); break;
        case "thinking": id = session.appendThinkingLevelChange(a[0]); break;
        case "model": id = session.appendModelChange(a[0], a[1]); break;
        case "usage": id = session.appendUsage(a[0], a[1], a[2], a[3], a[4]).id; break;
        case "compaction":
          id = session.appendCompaction(a[0], ref(a[1]), a[2], a[3], a[4], a[5]);
          break;
        case "custom": id = session.appendCustomEntry(a[0], a[1]); break;
        case "session_info": id = session.appendSessionInfo(a[0]); break;
        case "custom_message":
          id = session.appendCustomMessageEntry(a[0], a[1], a[2], a[3]);
          break;
        case "context_edit": id = session.appendContextEdit(ref(a[0]), a[1]); break;
        case "label": id = session.appendLabelChange(ref(a[0]), a[1]); break;
        case "branch": if (ids.length) session.branch(ref(a[0])); break;
        case "reset": session.resetLeaf(); break;
        case "branch_summary":
          id = session.branchWithSummary(ref(a[0]), a[1], a[2], a[3], a[4]);
          break;
        case "fork": {
          if (!ids.length) break;
          session.createBranchedSession(ref(a[0]));
          // The new session's ids: those of the copied entries and its label entries.
          ids.length = 0;
          for (const e of session.getEntries()) ids.push(e.id);
          break;
        }
        default: throw new Error(`unknown op ${name}`);
      }
      results.push(id);
      if (id !== null) ids.push(id);
    } catch (error) {
      results.push({ refused: String(error.message ?? error) });
    }
    files.add(session.getSessionFile());
  }
  const written = [...files].filter((f) => {
    try { readFileSync(f); return true; } catch { return false; }
  });
  return { results, files: written.map((file) => ({ file, view: open(file) })) };
}

const jobs = JSON.parse(readFileSync(0, "utf8"));
const out = jobs.map((job) => {
  if (job.entries) return job.leaves.map((leaf) => context(job.entries, leaf ?? undefined));
  if (job.open) return open(job.open);
  if (job.write) return write(job.write, job.ops);
  throw new Error("unknown job");
});
process.stdout.write(JSON.stringify(out));
