// Opens session files with Pi's own SessionManager and prints what Pi sees, as JSON:
// for each file its header, entries, leaf id, labels, session name and the context
// buildSessionContext() computes.  Used by tests/test_pi_interop.py.
//
//   node pi_read.mjs <pi-coding-agent package dir> <file>...
//
// Pi rewrites a v1/v2 file when it opens it: the tests hand it copies only.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, ...files] = process.argv.slice(2);
const { SessionManager } = await import(
  pathToFileURL(join(pkgDir, "dist", "core", "session-manager.js")).href
);

export function view(sm) {
  const entries = sm.getEntries();
  const labels = {};
  for (const entry of entries) {
    const label = sm.getLabel(entry.id);
    if (label !== undefined) labels[entry.id] = label;
  }
  return {
    header: sm.getHeader(),
    entries,
    leafId: sm.getLeafId(),
    labels,
    name: sm.getSessionName() ?? null,
    context: sm.buildSessionContext(),
  };
}

// Only as a script: pi_append.mjs imports view() from here.
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = files.map((file) => view(SessionManager.open(file)));
  process.stdout.write(JSON.stringify(out));
}
