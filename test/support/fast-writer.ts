// Child process for the snapshot and follow tests: appends user inputs to session 's' of a LevelDB log as fast as it can.
//
// Run: node --import tsx test/support/fast-writer.ts <dir> <ms> [batch] [inFlight]
// Prints one JSON line at the end: { head, error? } (exit 3 when an append failed).
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
const end = Date.now() + Number(msArg);
let error: string | undefined;
const worker = async (): Promise<void> => {
  while (Date.now() < end && error === undefined) {
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
