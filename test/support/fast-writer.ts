// Child process for the snapshot and follow tests: appends user inputs to session 's' of a LevelDB log as fast as it can.
//
// Run: node --import tsx test/support/fast-writer.ts <dir> <ms> [batch] [inFlight]
// <ms> is how long it writes, or `stdin` to write until its stdin ends (a test that needs N snapshots of a writer still
// writing ends it when it has them, however slow the machine). Prints `ready` once the log is open, and one JSON line
// at the end: { head, error? } (exit 3 when an append failed).
import { openLevelLog } from '../../src/log/index.js';

const [dir, msArg, batchArg, inFlightArg] = process.argv.slice(2);
if (!dir || !msArg) {
  process.stderr.write('usage: fast-writer.ts <dir> <ms> [batch] [inFlight]\n');
  process.exit(2);
}
const batch = Number(batchArg ?? 50);
const inFlight = Number(inFlightArg ?? 8);
const log = await openLevelLog(dir);
const text = 'x'.repeat(200);
let n = 0;
let stopped = false;
if (msArg === 'stdin') {
  process.stdin.on('end', () => (stopped = true));
  process.stdin.on('close', () => (stopped = true));
  process.stdin.resume();
} else {
  const end = Date.now() + Number(msArg);
  setInterval(() => (stopped ||= Date.now() >= end), 10).unref();
}
process.stdout.write('ready\n');
let error: string | undefined;
const worker = async (): Promise<void> => {
  while (!stopped && error === undefined) {
    const events = Array.from({ length: batch }, () => ({ type: 'user.input' as const, items: [{ type: 'message', role: 'user', content: `${n++} ${text}` }] }));
    try {
      await log.append('s', events);
    } catch (e) {
      error = String(e);
    }
  }
};
await Promise.all(Array.from({ length: inFlight }, worker));
const head = await log.head('s');
await log.close();
process.stdout.write(`${JSON.stringify({ head, ...(error !== undefined ? { error } : {}) })}\n`);
process.exit(error === undefined ? 0 : 3);
