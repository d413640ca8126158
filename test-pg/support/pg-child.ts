// Child process for the PostgreSQL multi-process suites: a writer (appends until told to stop or killed) or a subscriber.
//
// Run: node --import tsx test-pg/support/pg-child.ts <json settings>
//   writer:     {"role":"writer","url","schema","report","seed","durationMs","sessions":["s0",...],"concurrency","maxBatch","payload"}
//   subscriber: {"role":"subscriber","url","schema","report","session","count"}
//   either may add "notify" (false: append without NOTIFY) and "pollMs" (the log options of the same names).
// Prints `ready` on stdout once its log is open. A writer appends `ack <session> <firstSeq> <n> <tag>`
// to the report with fs.writeSync after each append resolved (so a SIGKILL cannot lose a reported
// line); a subscriber appends `seen <seq> <callId>` for each event, and exits 0 after `count`.
import { openSync, writeSync } from 'node:fs';
import type { NewSessionEvent } from '../../src/events/index.js';
import { openPostgresLog } from '../../src/postgres/index.js';

interface Settings {
  readonly role: 'writer' | 'subscriber';
  readonly url: string;
  readonly schema: string;
  readonly report: string;
  readonly seed?: number;
  readonly durationMs?: number;
  readonly sessions?: readonly string[];
  readonly concurrency?: number;
  readonly maxBatch?: number;
  readonly payload?: number;
  readonly session?: string;
  readonly count?: number;
  readonly notify?: boolean;
  readonly pollMs?: number;
}

const settings = JSON.parse(process.argv[2] ?? '{}') as Settings;
const report = openSync(settings.report, 'a');
const line = (text: string): void => {
  writeSync(report, `${text}\n`);
};

// mulberry32: a seeded generator, so a failing run can be repeated with its seed.
let state = (settings.seed ?? 1) >>> 0;
const random = (): number => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const between = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));

// Named connections, so the test can wait for this process's server backends after killing it.
const connectionString = new URL(settings.url);
connectionString.searchParams.set('application_name', `cl-child-${process.pid}`);
const log = await openPostgresLog(
  { connectionString: connectionString.toString() },
  {
    schema: settings.schema,
    poolSize: 4,
    ...(settings.notify === undefined ? {} : { notify: settings.notify }),
    ...(settings.pollMs === undefined ? {} : { pollMs: settings.pollMs }),
  },
);

if (settings.role === 'subscriber') {
  const session = settings.session ?? 'live';
  const count = settings.count ?? 0;
  let seen = 0;
  process.stdout.write('ready\n');
  for await (const event of log.subscribe(session)) {
    line(`seen ${event.seq} ${event.type === 'tool.result' ? event.callId : '-'}`);
    seen += 1;
    if (seen >= count) break;
  }
  await log.close();
  process.exit(0);
}

const sessions = settings.sessions ?? ['s0'];
const payload = 'x'.repeat(settings.payload ?? 100);
const deadline = Date.now() + (settings.durationMs ?? 1000);
let stopped = false;
process.on('SIGTERM', () => {
  stopped = true;
});
process.stdout.write('ready\n');

// `concurrency` loops, each with one append in flight: appends to one session from several loops
// (and several processes) race, and each batch carries a tag `<pid>.<loop>.<n>/<size>.<i>`.
const loop = async (id: number): Promise<void> => {
  for (let n = 0; !stopped && Date.now() < deadline; n++) {
    const session = sessions[between(0, sessions.length - 1)] ?? 's0';
    const size = between(1, settings.maxBatch ?? 5);
    const tag = `${process.pid}.${id}.${n}/${size}`;
    const events: NewSessionEvent[] = Array.from({ length: size }, (_, i) => ({ type: 'tool.result', callId: `${tag}.${i}`, output: payload }));
    const stored = await log.append(session, events);
    line(`ack ${JSON.stringify(session)} ${stored[0]?.seq ?? 0} ${stored.length} ${tag}`);
  }
};

await Promise.all(Array.from({ length: settings.concurrency ?? 2 }, (_, id) => loop(id)));
await log.close();
process.exit(0);
