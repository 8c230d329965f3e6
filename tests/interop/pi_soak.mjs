// Pi as a reader in the load-while-writing soak (tests/test_faults.py): one Node process
// opens one session file with Pi's own SessionManager again and again until the deadline
// (at least once), while other processes append to it, and writes every load it made as
// JSON to <out>: the ids of the entries in file order (leaf records left out) and the
// content of each message in the context buildSessionContext() builds.  Loads equal to the
// one before are stored once, with how many times they were seen in a row.
//
//   node pi_soak.mjs <pi-coding-agent package dir> <file> <seconds> <out>
//
// Works for Pi 0.73.1 and Pi 1.6 alike (both have dist/core/session-manager.js).  The file
// always has its version-3 header, so Pi's open never rewrites it.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, file, seconds, out] = process.argv.slice(2);
const { SessionManager } = await import(
  pathToFileURL(join(pkgDir, "dist", "core", "session-manager.js")).href
);

const deadline = performance.now() + Number(seconds) * 1000;
const loads = []; // [ids, contents, times seen in a row]
let last = "";
let count = 0;
while (count === 0 || performance.now() < deadline) {
  const session = SessionManager.open(file);
  const ids = session
    .getEntries()
    .filter((e) => e.type !== "leaf")
    .map((e) => e.id);
  const contents = session.buildSessionContext().messages.map((m) => m.content);
  const key = JSON.stringify([ids, contents]);
  if (key === last) {
    loads[loads.length - 1][2] += 1;
  } else {
    loads.push([ids, contents, 1]);
    last = key;
  }
  count += 1;
}
writeFileSync(out, JSON.stringify(loads));
