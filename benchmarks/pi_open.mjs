// Baseline (e): Pi's own loader, SessionManager.open, on a session file.
// usage: node pi_open.mjs <session-manager.js URL> <file> <runs>
// Prints {"seconds": median of <runs> opens after one warm-up open, "entries": n}.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const [moduleUrl, file, runsText] = process.argv.slice(2);
const { SessionManager } = await import(moduleUrl);
const runs = Number(runsText || "5");
const dir = mkdtempSync(join(tmpdir(), "ptree-bench-pi-"));
try {
  let entries = SessionManager.open(file, dir).getEntries().length; // warm-up
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const sm = SessionManager.open(file, dir);
    times.push((performance.now() - t0) / 1000);
    entries = sm.getEntries().length;
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ seconds: times[Math.floor(times.length / 2)], entries }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
