// `evictionStep` 1 vs 8 as a number users can check: the cacheable-prefix share of request tokens and the estimated
// cost (a provider that caches exactly the prefix), on the demo session and on a real mini-SWE-agent run.
// Run: npm run bench -- cache-prefix   (--quick: two demo tasks, the smallest real run; the real runs are read from
// $CONTEXT_LEDGER_TRAJECTORIES or ../shared/data/swe-trajectories)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_BUDGET, runDemoSession } from '../src/cli/demo/coding-session.js';
import { auditSession, openMemoryLog, type ContextBudget, type PriceTable } from '../src/index.js';
import { SWE_RUN_SETTINGS, playTrajectory, type Trajectory } from '../test/support/swe-trajectory.js';
import { trajectoriesDir as dataDir } from './corpus.js';
import { quick, reportResults, type BenchResult } from './support.js';

/** Illustrative prices per million tokens, with cached input at a tenth of input (the usual provider discount). */
const PRICE = { input: 3, output: 15, cachedInput: 0.3 };
const prices: PriceTable = { '*': PRICE };


interface Row {
  readonly workload: string;
  readonly evictionStep: number;
  readonly steps: number;
  readonly requestTokens: number;
  readonly prefixShare: number;
  readonly estimatedCost: number;
  readonly uncachedCost: number;
}

const measure = async (workload: string, evictionStep: number, play: (budget: ContextBudget) => Promise<string>, budget: ContextBudget, log: Awaited<ReturnType<typeof openMemoryLog>>): Promise<Row> => {
  const id = await play({ ...budget, evictionStep });
  const { account, totals } = await auditSession(log, id, { prices });
  const e = account.estimate;
  return {
    workload,
    evictionStep,
    steps: totals.steps,
    requestTokens: account.cacheablePrefix.requestTokens,
    prefixShare: account.cacheablePrefix.share,
    estimatedCost: e.cost ?? 0,
    uncachedCost: (e.inputTokens * PRICE.input + e.outputTokens * PRICE.output) / 1e6,
  };
};

const rows: Row[] = [];
for (const evictionStep of [1, 8]) {
  const log = await openMemoryLog();
  rows.push(await measure('demo', evictionStep, async (budget) => (await runDemoSession(log, { budget, ...(quick ? { tasks: 2 } : {}) })).sessionId, DEMO_BUDGET, log));
  await log.close();
}
if (existsSync(dataDir)) {
  const files = readdirSync(dataDir).filter((f) => f.endsWith('.traj.json'));
  // The longest run (or, --quick, the smallest with more than 40 messages).
  const sized = files.map((f) => ({ f, size: statSync(join(dataDir, f)).size })).sort((a, b) => a.size - b.size);
  const pick = quick ? sized.find((s) => s.size > 100_000) ?? sized.at(-1)! : sized.at(-1)!;
  const trajectory = JSON.parse(readFileSync(join(dataDir, pick.f), 'utf8')) as Trajectory;
  for (const evictionStep of [1, 8]) {
    const log = await openMemoryLog();
    rows.push(await measure(pick.f.replace('.traj.json', ''), evictionStep, async (budget) => (await playTrajectory(trajectory, { log, budget, usage: false })).sessionId, SWE_RUN_SETTINGS.budget, log));
    await log.close();
  }
} else {
  console.log(`(no real runs: ${dataDir} is absent; set CONTEXT_LEDGER_TRAJECTORIES)`);
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
console.log(`prices per million tokens: input $${PRICE.input}, cached input $${PRICE.cachedInput}, output $${PRICE.output}`);
console.log('| workload | evictionStep | steps | request tokens | cacheable prefix | estimated cost | cost without a cache |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.workload} | ${r.evictionStep} | ${r.steps} | ${r.requestTokens.toLocaleString('en-US')} | ${pct(r.prefixShare)} | $${r.estimatedCost.toFixed(4)} | $${r.uncachedCost.toFixed(4)} |`);
}
const results: BenchResult[] = [];
for (const workload of [...new Set(rows.map((r) => r.workload))]) {
  const [one, eight] = [1, 8].map((k) => rows.find((r) => r.workload === workload && r.evictionStep === k)!);
  results.push({ measure: `${workload}: cacheable prefix, evictionStep 1 → 8`, value: `${pct(one!.prefixShare)} → ${pct(eight!.prefixShare)}`, target: '', verdict: '' });
  results.push({ measure: `${workload}: estimated cost, evictionStep 1 → 8`, value: `$${one!.estimatedCost.toFixed(4)} → $${eight!.estimatedCost.toFixed(4)}`, target: '', verdict: '' });
}
reportResults('cache-prefix', results);
