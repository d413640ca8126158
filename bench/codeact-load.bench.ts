// CodeAct under load: many concurrent execute_javascript calls (peak RSS, workers, when the last ends) and bursts of
// 10,000 quick tool calls (calls started after the deadline), for this checkout and, with --before, another one.
//
//   node --expose-gc --import tsx bench/codeact-load.bench.ts [--quick] [--runs 150] [--limit 2000] [--bursts 20] [--before /work/main]
//
// Each scenario runs in a fresh Node process (the bench starts itself with --child), so its peak RSS is its own.
// `--before DIR` runs the same scenarios against the runJavascript of the checkout at DIR (its src/ and
// node_modules/), unchanged, and prints the two side by side.
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { argValue, positiveInt, quick, reportResults, type BenchResult } from './support.js';

const RUNS = positiveInt(argValue('--runs'), quick ? 30 : 150, 'concurrent runs');
const LIMIT_MS = positiveInt(argValue('--limit'), 2_000, 'time limit (ms)');
const BURSTS = positiveInt(argValue('--bursts'), quick ? 5 : 20, 'concurrent bursts');
const BURST_CALLS = 10_000;
const BURST_LIMIT_MS = 1_000;
const rootDir = dirname(dirname(fileURLToPath(import.meta.url)));

interface LoopFigures {
  readonly baselineRssMb: number;
  readonly peakRssMb: number;
  readonly firstEndMs: number;
  readonly lastEndMs: number;
  readonly workersStarted: number;
  readonly neverStarted: number;
  readonly timedOut: number;
  /** The calls that ended otherwise, by their message (digits as #). */
  readonly otherEndings: Record<string, number>;
}

interface BurstFigures {
  readonly lastEndMs: number;
  readonly calls: number;
  /** Tool calls that began after their run's deadline (taken right after runJavascript returned its promise). */
  readonly callsAfterDeadline: number;
  readonly peakRssMb: number;
}

type RunJavascript = (code: string, names: readonly string[], callTool: (name: string, args: unknown) => Promise<string>, timeoutMs: number) => Promise<string>;

/** The child: loads runJavascript from `src` and runs one scenario; prints its figures as one JSON line. */
const child = async (scenario: string, src: string): Promise<void> => {
  const { runJavascript } = (await import(join(src, 'src/runtime/codeact.ts'))) as { runJavascript: RunJavascript };
  const { ensureCodeSandbox } = (await import(join(src, 'src/runtime/sandbox/load.ts'))) as { ensureCodeSandbox: () => Promise<void> };
  const pools = (await import(join(src, 'src/runtime/sandbox/worker-pool.ts'))) as {
    sandboxWorkerStats?: () => { spawned: number };
    defaultCodeSandboxPool?: () => { stats(): { spawned: number } };
  };
  const spawned = (): number => pools.defaultCodeSandboxPool?.().stats().spawned ?? pools.sandboxWorkerStats?.().spawned ?? Number.NaN;
  await ensureCodeSandbox();
  globalThis.gc?.();
  const baselineRssMb = process.memoryUsage.rss() / 2 ** 20;
  const failed = (error: Error): string => `Error: ${error.message}`;
  const started = performance.now();
  if (scenario === 'loop') {
    const ends: number[] = [];
    const outputs = await Promise.all(
      Array.from({ length: RUNS }, () =>
        runJavascript('while(true){}', [], async () => 'none', LIMIT_MS)
          .catch(failed)
          .finally(() => ends.push(performance.now() - started)),
      ),
    );
    const figures: LoopFigures = {
      baselineRssMb,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      firstEndMs: Math.min(...ends),
      lastEndMs: Math.max(...ends),
      workersStarted: spawned(),
      neverStarted: outputs.filter((o) => o.includes('it never started')).length,
      timedOut: outputs.filter((o) => o.startsWith(`Error: code timed out after ${LIMIT_MS} ms`)).length,
      otherEndings: {},
    };
    for (const output of outputs.filter((o) => !o.startsWith(`Error: code timed out after ${LIMIT_MS} ms`))) {
      const key = output.replace(/\d+/g, '#');
      (figures.otherEndings as Record<string, number>)[key] = (figures.otherEndings[key] ?? 0) + 1;
    }
    console.log(JSON.stringify(figures));
    return;
  }
  const code = `const calls = []; for (let i = 0; i < ${BURST_CALLS}; i++) calls.push(tools.t({ i })); await Promise.all(calls); return calls.length;`;
  let calls = 0;
  let callsAfterDeadline = 0;
  const ends = await Promise.all(
    Array.from({ length: BURSTS }, async () => {
      let deadline = Number.POSITIVE_INFINITY;
      const quickTool = async (): Promise<string> => {
        calls += 1;
        if (performance.now() > deadline) callsAfterDeadline += 1;
        return 'ok';
      };
      const running = runJavascript(code, ['t'], quickTool, BURST_LIMIT_MS).catch(failed);
      deadline = performance.now() + BURST_LIMIT_MS;
      await running;
      return performance.now() - started;
    }),
  );
  const figures: BurstFigures = { lastEndMs: Math.max(...ends), calls, callsAfterDeadline, peakRssMb: process.resourceUsage().maxRSS / 1024 };
  console.log(JSON.stringify(figures));
};

const runChild = (scenario: string, src: string): Promise<unknown> =>
  new Promise((resolvePromise, reject) => {
    const extra = [...(quick ? ['--quick'] : []), '--runs', String(RUNS), '--limit', String(LIMIT_MS), '--bursts', String(BURSTS)];
    const proc = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--child', scenario, '--src', src, ...extra], {
      cwd: src,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.on('error', reject);
    proc.on('close', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`the ${scenario} scenario from ${src} exited ${code}: ${out}`));
      else resolvePromise(JSON.parse(line));
    });
  });

const mb = (x: number): string => `${x.toFixed(0)} MB`;
const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

const main = async (): Promise<void> => {
  const before = argValue('--before');
  const checkouts: [string, string][] = [...(before !== undefined ? ([['before', resolve(before)]] as [string, string][]) : []), ['after', rootDir]];
  console.log(`CodeAct under load: ${RUNS} concurrent runs of while(true){} with a ${LIMIT_MS} ms limit; ${BURSTS} concurrent runs of ${BURST_CALLS} quick tool calls with a ${BURST_LIMIT_MS} ms limit`);
  console.log(`load average before: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const loops = new Map<string, LoopFigures>();
  const bursts = new Map<string, BurstFigures>();
  for (const [name, src] of checkouts) {
    loops.set(name, (await runChild('loop', src)) as LoopFigures);
    bursts.set(name, (await runChild('burst', src)) as BurstFigures);
  }
  console.log('\nwhile(true){} runs          ' + checkouts.map(([name]) => name.padStart(12)).join(''));
  const row = (label: string, show: (f: LoopFigures) => string): void => console.log(label.padEnd(28) + checkouts.map(([name]) => show(loops.get(name)!).padStart(12)).join(''));
  row('RSS before the runs', (f) => mb(f.baselineRssMb));
  row('peak RSS', (f) => mb(f.peakRssMb));
  row('workers started', (f) => String(f.workersStarted));
  row('first ends', (f) => seconds(f.firstEndMs));
  row('last ends', (f) => seconds(f.lastEndMs));
  row('timed out', (f) => String(f.timedOut));
  row('of which never started', (f) => String(f.neverStarted));
  for (const [name] of checkouts) {
    for (const [ending, count] of Object.entries(loops.get(name)!.otherEndings)) console.log(`  ${name}: ${count} ended with ${JSON.stringify(ending)}`);
  }
  console.log(`\n${BURST_CALLS.toLocaleString('en')}-call bursts            ` + checkouts.map(([name]) => name.padStart(12)).join(''));
  const burstRow = (label: string, show: (f: BurstFigures) => string): void =>
    console.log(label.padEnd(28) + checkouts.map(([name]) => show(bursts.get(name)!).padStart(12)).join(''));
  burstRow('last ends', (f) => seconds(f.lastEndMs));
  burstRow('tool calls run', (f) => String(f.calls));
  burstRow('calls after the deadline', (f) => String(f.callsAfterDeadline));
  burstRow('peak RSS', (f) => mb(f.peakRssMb));
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);

  const after = loops.get('after')!;
  const afterBurst = bursts.get('after')!;
  const results: BenchResult[] = [
    { measure: `${RUNS} loops: peak RSS`, value: mb(after.peakRssMb), target: '', verdict: '' },
    { measure: `${RUNS} loops: last ends`, value: seconds(after.lastEndMs), target: '', verdict: '' },
    { measure: `${RUNS} loops: workers started`, value: String(after.workersStarted), target: '', verdict: '' },
    {
      measure: `${BURSTS} bursts: calls after the deadline`,
      value: String(afterBurst.callsAfterDeadline),
      target: '0',
      verdict: afterBurst.callsAfterDeadline === 0 ? 'PASS' : 'MISS',
    },
  ];
  const previous = loops.get('before');
  if (previous) {
    results.push(
      { measure: `${RUNS} loops: peak RSS after ÷ before`, value: (after.peakRssMb / previous.peakRssMb).toFixed(2), target: '', verdict: '' },
      { measure: `${RUNS} loops: last end after ÷ before`, value: (after.lastEndMs / previous.lastEndMs).toFixed(2), target: '', verdict: '' },
    );
  }
  reportResults('codeact-load', results);
};

const scenario = argValue('--child');
if (scenario !== undefined) await child(scenario, argValue('--src') ?? rootDir);
else await main();
process.exit(0);
