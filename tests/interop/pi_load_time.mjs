// Times Pi's own loader on a session file, for the benchmarks: SessionManager.open
// (read, parse, index; Pi may rewrite an old file, so give it a copy of a v3 file) and
// buildSessionContext at the leaf.  Prints {"open_ms": [...], "context_ms": [...]}.
//
//   node pi_load_time.mjs <pi-coding-agent package dir> <file> [repeats]
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, file, repeats = "5"] = process.argv.slice(2);
const { SessionManager } = await import(
  pathToFileURL(join(pkgDir, "dist", "core", "session-manager.js")).href
);
const open_ms = [];
const context_ms = [];
for (let i = 0; i < Number(repeats); i++) {
  let t0 = performance.now();
  const sm = SessionManager.open(file);
  open_ms.push(performance.now() - t0);
  t0 = performance.now();
  sm.buildSessionContext();
  context_ms.push(performance.now() - t0);
}
process.stdout.write(JSON.stringify({ open_ms, context_ms }));
