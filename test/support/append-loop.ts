// Child process for the CLI snapshot test: holds a LevelDB log open and appends to session "live" in a loop.
//
// Run: node --import tsx test/support/append-loop.ts <dir>
// Prints `ready <seq>` once a first batch is written, then appends batches of 1–20 events until killed.
import { openLevelLog } from '../../src/log/index.js';

const [dir] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: append-loop.ts <dir>\n');
  process.exit(2);
}
const log = await openLevelLog(dir);
let n = 0;
const batch = () =>
  Array.from({ length: 1 + (n++ % 10) }, (_, i) => ({ type: 'tool.result' as const, callId: `c${n}.${i}`, output: 'x'.repeat(100 + ((n * 37) % 1000)) }));
const first = await log.append('live', batch());
process.stdout.write(`ready ${first.at(-1)!.seq}\n`);
// A short pause between appends, as an agent between steps; LevelDB still flushes and compacts under the reader.
for (;;) {
  await log.append('live', batch());
  await new Promise((resolve) => setTimeout(resolve, 1));
}
