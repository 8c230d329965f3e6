// Baseline (e): Pi's own loader, SessionManager.open, on a session file.
// usage: node pi_open.mjs <session-manager.js URL> <file> <runs>
// Prints {"seconds": median CPU time (user + system) of <runs> opens after one warm-up
// open, "wall": the median wall time, "entries": n}.  CPU time, as ptree's side is timed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const [moduleUrl, file, runsText] = process.argv.slice(2);
const { SessionManager } = await import(moduleUrl);
const runs = Number(runsText || "5");
const dir = mkdtempSync(join(tmpdir(), "ptree-bench-pi-"));
try {
  let entries = SessionManager.open(file, dir).getEntries().length; // warm-up
  const cpu = [];
  const wall = [];
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const sm = SessionManager.open(file, dir);
    wall.push((performance.now() - t0) / 1000);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1e6);
    entries = sm.getEntries().length;
  }
  console.log(JSON.stringify({ seconds: median(cpu), wall: median(wall), entries }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
