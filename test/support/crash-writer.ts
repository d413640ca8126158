// Child process for the crash-safety test: appends to a LevelDB log (three sessions, three patterns) until it is killed.
//
// Run: node --import tsx test/support/crash-writer.ts <dir> <reportFile> <seed> [sync]
// Prints `ready` on stdout once the log is open. After every append whose promise resolved it
// appends `<session> <seq>` (the resolved last seq) to <reportFile> with fs.writeSync: the bytes
// are in the kernel before the next append starts, so a SIGKILL cannot lose a reported line.
import { closeSync, openSync, writeSync } from 'node:fs';
import type { NewSessionEvent } from '../../src/events/index.js';
import { openLevelLog } from '../../src/log/index.js';

const [dir, reportFile, seedText, syncFlag] = process.argv.slice(2);
if (!dir || !reportFile) {
  process.stderr.write('usage: crash-writer.ts <dir> <reportFile> <seed> [sync]\n');
  process.exit(2);
}

// mulberry32: a seeded generator, so a failing run can be repeated with its seed.
let state = Number(seedText ?? '1') >>> 0;
const random = (): number => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const between = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));

const payload = 'x'.repeat(between(50, 400));
const batch = (tag: string, n: number): NewSessionEvent[] =>
  Array.from({ length: n }, (_, i) => ({ type: 'tool.result', callId: `${tag}.${i}`, output: payload }));

const log = await openLevelLog(dir, { sync: syncFlag === 'sync' });
const report = openSync(reportFile, 'a');
const reported = (session: string, seq: number): void => {
  writeSync(report, `${session} ${seq}\n`);
};
process.stdout.write('ready\n');

// Session "a": one awaited append at a time, each with the expectedSeq it should have.
const awaitedLoop = async (): Promise<never> => {
  let head = await log.head('a');
  for (let round = 0; ; round++) {
    const stored = await log.append('a', batch(`a${round}`, between(1, 20)), { expectedSeq: head });
    head = stored.at(-1)?.seq ?? head;
    reported('a', head);
  }
};

// Session "b": bursts of concurrent appends (group commit); each resolved promise is reported on its own.
const burstLoop = async (): Promise<never> => {
  for (let round = 0; ; round++) {
    const burst = Array.from({ length: between(1, 8) }, (_, k) =>
      log.append('b', batch(`b${round}.${k}`, between(1, 10))).then((stored) => {
        const last = stored.at(-1);
        if (last) reported('b', last.seq);
      }),
    );
    await Promise.all(burst);
  }
};

// Session "c": floods of one-event appends, more than one group (1024) each, so a group is sealed
// while the one before it is being written (and one-event groups are written as a plain put).
const floodLoop = async (): Promise<never> => {
  for (let round = 0; ; round++) {
    const flood = Array.from({ length: between(1030, 1100) }, (_, k) =>
      log.append('c', batch(`c${round}.${k}`, 1)).then((stored) => {
        const last = stored.at(-1);
        if (last) reported('c', last.seq);
      }),
    );
    await Promise.all(flood);
  }
};

try {
  await Promise.all([awaitedLoop(), burstLoop(), floodLoop()]);
} catch (error) {
  process.stderr.write(`crash-writer failed: ${(error as Error).stack ?? String(error)}\n`);
  closeSync(report);
  process.exit(1);
}
