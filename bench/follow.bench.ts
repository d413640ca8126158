// `events --follow` behind a busy writer: how far the follower lags while a writer appends as fast as it can to a
// LevelDB directory, and how long after the writer stops the follower has every event.
//
//   npm run bench -- follow                 # a 10 s writer
//   npm run bench -- follow --quick         # a 4 s writer
//   node --import tsx bench/follow.bench.ts --ms 20000
//
// The writer (test/support/fast-writer.ts, a child process) appends batches of 50 user inputs of 200 characters with
// 8 appends in flight, as fast as the machine lets it, to session `s`. The follower is the CLI
// (`context-ledger events s --dir DIR --follow --json`, a child process); this process reads its stdout and stamps
// each event as it arrives. Lag = arrival time − the event's `at` (the writer's clock, the same machine). Measured
// from the follower's second second of output on (its start and first catch-up are apart), until the writer stops.
// It also checks every event arrived once, in order (no gap, no duplicate).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { argValue, positiveInt, quick, reportResults } from './support.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const WRITER_MS = positiveInt(argValue('--ms'), quick ? 4_000 : 10_000, 'writer duration (ms)');
const WARM_UP_MS = 1_000;

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

const main = async (): Promise<void> => {
  const base = await mkdtemp(join(tmpdir(), 'context-ledger-follow-bench-'));
  const dir = join(base, 'ledger');
  try {
    // The directory exists before the follower starts (a short first write).
    await new Promise<void>((done, fail) => {
      const seed = spawn(process.execPath, ['--import', 'tsx', join(root, 'test', 'support', 'fast-writer.ts'), dir, '200'], { cwd: root, stdio: 'ignore' });
      seed.on('error', fail);
      seed.on('close', () => done());
    });
    const follower = spawn(process.execPath, [join(root, 'bin', 'context-ledger.js'), 'events', 's', '--dir', dir, '--follow', '--json'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] });
    let firstArrival = 0;
    let lastSeq = 0;
    let gaps = 0;
    let lastArrival = 0;
    const lags: number[] = [];
    let writerStopped = Number.POSITIVE_INFINITY;
    let buffered = '';
    follower.stdout.setEncoding('utf8');
    follower.stdout.on('data', (chunk: string) => {
      const now = Date.now();
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line === '') continue;
        const event = JSON.parse(line) as { seq: number; at: string };
        if (event.seq !== lastSeq + 1) gaps += 1;
        lastSeq = event.seq;
        if (firstArrival === 0) firstArrival = now;
        lastArrival = now;
        if (now - firstArrival >= WARM_UP_MS && now <= writerStopped) lags.push(now - Date.parse(event.at));
      }
    });
    // Wait for the follower to print the seed's events: it is up.
    while (lastSeq === 0) await new Promise((r) => setTimeout(r, 50));
    const writer = spawn(process.execPath, ['--import', 'tsx', join(root, 'test', 'support', 'fast-writer.ts'), dir, String(WRITER_MS)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let writerOut = '';
    writer.stdout.on('data', (d: Buffer) => (writerOut += d.toString()));
    const writerStarted = Date.now();
    await new Promise<void>((done) => writer.on('close', () => done()));
    writerStopped = Date.now();
    const report = JSON.parse(writerOut.trim().split('\n').at(-1) ?? '{}') as { head: number; error?: string };
    if (report.error !== undefined) throw new Error(`the writer failed: ${report.error}`);
    const deadline = Date.now() + 60_000;
    while (lastSeq < report.head && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const caughtUp = lastArrival - writerStopped;
    follower.kill('SIGINT');
    await new Promise<void>((done) => follower.on('close', () => done()));
    const sorted = [...lags].sort((a, b) => a - b);
    const rate = Math.round((report.head - 1) / ((writerStopped - writerStarted) / 1000));
    const [one] = loadavg();
    console.log(`follow: writer ${WRITER_MS} ms, ${report.head.toLocaleString('en-US')} events (${rate.toLocaleString('en-US')}/s); ${cpus().length} cores, load ${one?.toFixed(1)}`);
    console.log(`lag while writing (${sorted.length.toLocaleString('en-US')} events): p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted.at(-1)} ms`);
    console.log(`every event ${lastSeq === report.head ? '' : 'NOT '}delivered (last seq ${lastSeq} of ${report.head}), ${gaps} gaps or duplicates; the last ${caughtUp} ms after the writer stopped`);
    reportResults('follow', [
      { measure: `events/s written`, value: rate.toLocaleString('en-US'), target: '', verdict: '' },
      { measure: 'follow lag p50 / p99', value: `${percentile(sorted, 50)} / ${percentile(sorted, 99)} ms`, target: '', verdict: '' },
      { measure: 'last event after writer stopped', value: `${caughtUp} ms`, target: '', verdict: '' },
      { measure: 'gaps or duplicates', value: String(gaps), target: '0', verdict: gaps === 0 && lastSeq === report.head ? 'PASS' : 'MISS' },
    ]);
    if (gaps > 0 || lastSeq !== report.head) process.exitCode = 1;
  } finally {
    await rm(base, { recursive: true, force: true });
  }
};

await main();
