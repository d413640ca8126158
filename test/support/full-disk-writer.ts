// Child process for the full-disk test: a session on a LevelDB log on a small filesystem takes user inputs until the disk is full.
//
// Run: node --import tsx test/support/full-disk-writer.ts <dir>
// Prints one JSON line: { acknowledged: [input index], rejections: [{ index, name, code, written, message }], checkpointErrors }.
import { openLevelLog } from '../../src/log/index.js';
import { openSession } from '../../src/session/index.js';

const [dir] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: full-disk-writer.ts <dir>\n');
  process.exit(2);
}
const log = await openLevelLog(dir);
const checkpointErrors: string[] = [];
const session = await openSession(log, { id: 'full', checkpointEvery: 4, onCheckpointError: (e) => checkpointErrors.push(String(e)) });
const acknowledged: number[] = [];
const rejections: { index: number; name: string; code?: string; written?: unknown; message: string }[] = [];
const text = 'y'.repeat(60_000);
for (let i = 0; i < 400 && rejections.length < 5; i++) {
  try {
    await session.memory.addUserInput(`${i} ${text}`);
    acknowledged.push(i);
  } catch (error) {
    const e = error as { name?: string; code?: string; written?: unknown; message?: string };
    rejections.push({ index: i, name: String(e.name), ...(e.code !== undefined ? { code: e.code } : {}), written: e.written ?? null, message: String(e.message).slice(0, 200) });
  }
}
process.stdout.write(`${JSON.stringify({ acknowledged, rejections, checkpointErrors: checkpointErrors.length })}\n`);
await log.close().catch(() => undefined);
process.exit(0);
