// `npm run soak`: scripted agents under load, with injected failures, then every session checked.
//
//   npm run soak                                      # the full run (LevelDB; PostgreSQL when CONTEXT_LEDGER_PG_URL is set)
//   bash scripts/with-postgres.sh npm run soak        # with a throwaway PostgreSQL cluster
//   npm run soak -- --quick                           # the short form CI runs (well under a minute)
//   npm run soak -- --agents 200 --steps 60 --seconds 120 --pg-processes 8 --pg-agents 25 --sample 20 --seed 7
//
// Two loads, one after the other:
// - LevelDB: `--agents` (200) concurrent agents in this process, each a ReAct agent (Agents.react) with its own
//   session on one LevelDB log (compaction keeps memory bounded, a checkpoint every 50 events).
// - PostgreSQL (when CONTEXT_LEDGER_PG_URL is set; under CI=true it must be): `--pg-processes` (8) child processes
//   × `--pg-agents` (25) agents each, every process with its own pool on a fresh schema of that database.
// Every agent runs requests until it has taken `--steps` steps or `--seconds` have passed: each request is a few
// steps whose scripted model calls one to three tools and then answers. Injected: 5% of tool calls throw, 5% of
// model calls throw (a provider error: the run fails), and 5% of runs are aborted after a random delay.
//
// Then, on each store: every session's chain is verified; what the log acknowledged (every event the runtime was
// given back by an append, by seq and hash) is compared with what is stored ("lost": acknowledged and not stored as
// acknowledged; the chain links every stored event to the one before, so matching the last acknowledged hash and
// a valid chain mean every acknowledged event is there); `checkSessionLaws` runs on every session; a sample is
// replayed in 'project' and 'rerun' mode and must be identical. "broken": a session whose chain does not verify,
// that breaks a law, or whose replay differs. Printed: steps/s, p50/p99 step latency (step.started → step.ended as
// the runtime reports them), peak RSS, what was injected, and `N lost, N broken`. Exit 1 unless both are 0.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { StructuredSummaryCompactPolicy } from '../src/compact/index.js';
import type { SessionEvent } from '../src/events/index.js';
import { assistantMessage, functionCall, type MemoryItem } from '../src/items/index.js';
import { openLevelLog, type SessionEventLog } from '../src/log/index.js';
import type { ModelClient, ModelResult } from '../src/model/index.js';
import { replaySession } from '../src/replay/index.js';
import { Agents, defineTool, type Tool } from '../src/runtime/index.js';
import { checkSessionLaws } from '../src/testing/index.js';
import { prng, type Random } from '../bench/support.js';

// ---------------------------------------------------------------- options

const args = process.argv.slice(2);
const flag = (name: string): boolean => args.includes(name);
const value = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const KNOWN = new Set(['--quick', '--child', '--agents', '--steps', '--seconds', '--pg-processes', '--pg-agents', '--sample', '--seed', '--schema', '--index', '--help', '-h']);
for (let i = 0; i < args.length; i++) {
  const arg = args[i] as string;
  if (!KNOWN.has(arg)) {
    console.error(`soak: unknown option ${arg}\n${USAGE()}`);
    process.exit(2);
  }
  if (!['--quick', '--child', '--help', '-h'].includes(arg)) i += 1;
}
function USAGE(): string {
  return 'usage: npm run soak [-- --quick] [--agents N] [--steps N] [--seconds N] [--pg-processes N] [--pg-agents N] [--sample N] [--seed N]';
}
if (flag('--help') || flag('-h')) {
  console.log(USAGE());
  process.exit(0);
}
const int = (name: string, fallback: number): number => {
  const text = value(name);
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) {
    console.error(`soak: ${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return n;
};
const quick = flag('--quick');
const AGENTS = int('--agents', 200);
const STEPS = int('--steps', quick ? 6 : 60);
const SECONDS = int('--seconds', quick ? 20 : 120);
const PG_PROCESSES = int('--pg-processes', 8);
const PG_AGENTS = int('--pg-agents', 25);
const SAMPLE = int('--sample', quick ? 10 : 20);
const SEED = int('--seed', 20261205);
const PG_URL = process.env['CONTEXT_LEDGER_PG_URL'];

const TOOL_FAILURE_RATE = 0.05;
const MODEL_ERROR_RATE = 0.05;
const ABORT_RATE = 0.05;

// ---------------------------------------------------------------- the agents

interface Injected {
  toolFailures: number;
  modelErrors: number;
  aborts: number;
}

/** What one agent run saw: what the log acknowledged, steps and their latencies, runs and how they ended. */
interface AgentReport {
  readonly sessionId: string;
  /** Events the runtime was given back by the log (acknowledged), the last one's seq and hash. */
  acknowledged: number;
  lastSeq: number;
  lastHash: string;
  /** Acknowledged seqs that did not follow the one before (never expected). */
  disorder: number;
  steps: number;
  runs: number;
  finished: number;
  failed: number;
  unexpected: string[];
}

interface LoadReport {
  readonly agents: AgentReport[];
  readonly latencies: number[];
  readonly injected: Injected;
  /** Wall-clock time of the load (Date.now() at its start and end: children's compare across processes). */
  readonly startedAt: number;
  readonly endedAt: number;
  readonly maxRssKb: number;
}

const FILES = ['src/index.ts', 'src/log/store.ts', 'src/memory/reducer.ts', 'README.md', 'docs/guide.md', 'test/log.test.ts'];

/** The tools, each failing (throwing) at TOOL_FAILURE_RATE, with a little asynchronous work. */
const toolsFor = (random: Random, injected: Injected): Tool[] => {
  const maybeFail = async (what: string): Promise<void> => {
    await new Promise((r) => setImmediate(r));
    if (random() < TOOL_FAILURE_RATE) {
      injected.toolFailures += 1;
      throw new Error(`soak: injected tool failure in ${what}`);
    }
  };
  return [
    defineTool({
      name: 'read_file',
      description: 'Read a file',
      parameters: z.object({ path: z.string() }),
      execute: async ({ path }) => {
        await maybeFail('read_file');
        return `// ${path}\n${'export const value = compute(input, options);\n'.repeat(1 + Math.floor(random() * 20))}`;
      },
    }),
    defineTool({
      name: 'run_tests',
      description: 'Run the tests',
      parameters: z.object({ filter: z.string() }),
      execute: async ({ filter }) => {
        await maybeFail('run_tests');
        return random() < 0.3 ? `FAIL ${filter}: expected 2, got 3` : `ok ${filter}: ${1 + Math.floor(random() * 40)} passed`;
      },
    }),
    defineTool({
      name: 'write_file',
      description: 'Write a file',
      parameters: z.object({ path: z.string(), text: z.string() }),
      execute: async ({ path, text }) => {
        await maybeFail('write_file');
        return `wrote ${text.length} characters to ${path}`;
      },
    }),
  ];
};

/** A scripted model: one to three tool calls a step until it decides to answer; MODEL_ERROR_RATE of its calls throw. */
const modelFor = (random: Random, injected: Injected): ModelClient => {
  let calls = 0;
  return {
    async create(request): Promise<ModelResult> {
      calls += 1;
      await new Promise((r) => setImmediate(r));
      if (random() < MODEL_ERROR_RATE) {
        injected.modelErrors += 1;
        throw Object.assign(new Error('soak: injected model error (HTTP 500)'), { status: 500 });
      }
      const items = request.items as readonly MemoryItem[];
      const lastUser = items.findLastIndex((i) => i.type === 'message' && (i as { role?: unknown }).role === 'user');
      const toolRounds = items.slice(lastUser + 1).filter((i) => i.type === 'function_call_output').length;
      if (toolRounds >= 8 || (toolRounds > 0 && random() < 0.35)) return { outputText: 'done', items: [assistantMessage(`Done after ${toolRounds} tool result(s).`)] };
      const n = 1 + Math.floor(random() * 3);
      const out: MemoryItem[] = [];
      for (let i = 0; i < n; i++) {
        const id = `call_${calls}_${i}`;
        const pick = random();
        const file = FILES[Math.floor(random() * FILES.length)] as string;
        out.push(
          pick < 0.5
            ? functionCall(id, 'read_file', { path: file })
            : pick < 0.8
              ? functionCall(id, 'run_tests', { filter: file })
              : functionCall(id, 'write_file', { path: file, text: 'x'.repeat(Math.floor(random() * 500)) }),
        );
      }
      return { items: out };
    },
  };
};

/** Runs `count` agents on `log` concurrently until each took STEPS steps or the deadline passed. */
const runAgents = async (log: SessionEventLog, prefix: string, count: number, seed: number, deadline: number): Promise<LoadReport> => {
  const injected: Injected = { toolFailures: 0, modelErrors: 0, aborts: 0 };
  const latencies: number[] = [];
  const startedAt = Date.now();
  const agents = await Promise.all(
    Array.from({ length: count }, async (_, index): Promise<AgentReport> => {
      const random = prng(seed * 1_000 + index);
      const report: AgentReport = { sessionId: `${prefix}-${index}`, acknowledged: 0, lastSeq: 0, lastHash: '', disorder: 0, steps: 0, runs: 0, finished: 0, failed: 0, unexpected: [] };
      let stepStarted = 0;
      const agent = Agents.react({
        modelClient: modelFor(random, injected),
        model: 'scripted',
        systemPrompt: 'You are a coding agent under a soak test.',
        tools: toolsFor(random, injected),
        log,
        compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: 30 }, undefined, { compactAbove: 60 }),
        contextBudget: { maxItems: 40 },
        checkpointEvery: 50,
        maxSteps: 12,
        onEvent: (notification) => {
          if (notification.type !== 'EVENT') return;
          const event = notification.event;
          if (event.sessionId !== report.sessionId) return;
          if (event.seq !== report.lastSeq + 1) report.disorder += 1;
          report.acknowledged += 1;
          report.lastSeq = event.seq;
          report.lastHash = event.hash;
          if (event.type === 'step.started') stepStarted = performance.now();
          if (event.type === 'step.ended') {
            report.steps += 1;
            latencies.push(performance.now() - stepStarted);
          }
        },
      });
      const session = await agent.newSession({ id: report.sessionId });
      while (report.steps < STEPS && Date.now() < deadline) {
        const controller = new AbortController();
        let timer: NodeJS.Timeout | undefined;
        if (random() < ABORT_RATE) {
          timer = setTimeout(() => {
            injected.aborts += 1;
            controller.abort(new Error('soak: injected abort'));
          }, Math.floor(random() * 20));
        }
        report.runs += 1;
        try {
          const result = await session.run(`Task ${report.runs}: fix ${FILES[Math.floor(random() * FILES.length)]}`, { signal: controller.signal });
          if (result.status === 'finished') report.finished += 1;
        } catch (error) {
          const e = error as { name?: string; message?: string };
          if (e.name === 'AgentRunError' && /soak: injected|run aborted/.test(String(e.message))) report.failed += 1;
          else if (report.unexpected.length < 5) report.unexpected.push(`${e.name}: ${String(e.message).slice(0, 300)}`);
        } finally {
          if (timer) clearTimeout(timer);
        }
      }
      return report;
    }),
  );
  return { agents, latencies, injected, startedAt, endedAt: Date.now(), maxRssKb: process.resourceUsage().maxRSS };
};

// ---------------------------------------------------------------- checking

interface CheckReport {
  readonly sessions: number;
  readonly acknowledged: number;
  readonly stored: number;
  readonly lost: number;
  readonly unacknowledged: number;
  readonly broken: string[];
  readonly replayed: number;
  readonly lawsChecked: number;
}

const collect = async <T>(iterable: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const value of iterable) out.push(value);
  return out;
};

const check = async (log: SessionEventLog, agents: readonly AgentReport[], sample: number): Promise<CheckReport> => {
  let acknowledged = 0;
  let stored = 0;
  let lost = 0;
  let unacknowledged = 0;
  let lawsChecked = 0;
  let replayed = 0;
  const broken: string[] = [];
  const step = Math.max(1, Math.floor(agents.length / Math.max(1, sample)));
  for (const [index, agent] of agents.entries()) {
    const id = agent.sessionId;
    acknowledged += agent.acknowledged;
    if (agent.disorder > 0) broken.push(`${id}: ${agent.disorder} acknowledged event(s) out of seq order`);
    for (const problem of agent.unexpected) broken.push(`${id}: unexpected error: ${problem}`);
    const verdict = await log.verify(id);
    const events: SessionEvent[] = await collect(log.read(id));
    stored += events.length;
    if (!verdict.valid) broken.push(`${id}: chain broken at seq ${verdict.firstBrokenSeq}: ${verdict.problem ?? ''}`);
    // Acknowledged events missing or different: the last acknowledged one must be stored with its hash (the chain
    // then vouches for every one before it); acknowledged seqs run 1..lastSeq.
    const atLast = events[agent.lastSeq - 1];
    if (agent.lastSeq > 0 && atLast?.hash !== agent.lastHash) lost += agent.lastSeq;
    else if (agent.acknowledged !== agent.lastSeq) lost += Math.abs(agent.lastSeq - agent.acknowledged);
    unacknowledged += Math.max(0, events.length - agent.lastSeq);
    const violations = checkSessionLaws(events);
    lawsChecked += 1;
    if (violations.length > 0) broken.push(`${id}: ${violations.length} law violation(s), first ${violations[0]?.law} at seq ${violations[0]?.seq}: ${violations[0]?.message}`);
    if (index % step === 0 && replayed < sample) {
      for (const mode of ['project', 'rerun'] as const) {
        const result = await replaySession(log, id, { mode }).catch((error: unknown) => ({ identical: false, divergentSteps: 0, firstDivergence: String(error), notes: [] as string[] }));
        if (!result.identical) {
          const first = result.firstDivergence;
          broken.push(`${id}: replay '${mode}' differs at ${result.divergentSteps} step(s), first ${JSON.stringify(first).slice(0, 600)}; notes ${result.notes.join(' | ').slice(0, 300)}`);
        }
      }
      replayed += 1;
    }
  }
  return { sessions: agents.length, acknowledged, stored, lost, unacknowledged, broken, replayed, lawsChecked };
};

// ---------------------------------------------------------------- printing

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

const printLoad = (title: string, load: LoadReport, checked: CheckReport, maxRssKb: number): void => {
  const steps = load.agents.reduce((a, r) => a + r.steps, 0);
  const runs = load.agents.reduce((a, r) => a + r.runs, 0);
  const finished = load.agents.reduce((a, r) => a + r.finished, 0);
  const failed = load.agents.reduce((a, r) => a + r.failed, 0);
  const sorted = [...load.latencies].sort((a, b) => a - b);
  const seconds = (load.endedAt - load.startedAt) / 1000;
  console.log(`\n${title}`);
  console.log(`  ${fmt(steps)} steps in ${seconds.toFixed(1)} s = ${fmt(steps / seconds)} steps/s; step latency p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms; peak RSS ${fmt(maxRssKb / 1024)} MiB`);
  console.log(`  runs ${fmt(runs)}: ${fmt(finished)} finished, ${fmt(failed)} failed by injection; injected ${fmt(load.injected.toolFailures)} tool failures, ${fmt(load.injected.modelErrors)} model errors, ${fmt(load.injected.aborts)} aborts`);
  console.log(`  checked ${fmt(checked.sessions)} sessions: verify and checkSessionLaws on all, ${checked.replayed} replayed in 'project' and 'rerun'; ${fmt(checked.acknowledged)} events acknowledged, ${fmt(checked.stored)} stored (${fmt(checked.unacknowledged)} stored but never acknowledged)`);
  for (const problem of checked.broken.slice(0, 10)) console.log(`  BROKEN ${problem}`);
  console.log(`  ${checked.lost} lost, ${checked.broken.length} broken`);
};

// ---------------------------------------------------------------- PostgreSQL: the children and the parent

const childMain = async (): Promise<void> => {
  const schema = value('--schema') as string;
  const index = int('--index', 0);
  const { openPostgresLog } = await import('../src/postgres/index.js');
  const log = await openPostgresLog({ connectionString: PG_URL as string }, { schema, poolSize: 4 });
  try {
    const load = await runAgents(log, `pg${index}`, PG_AGENTS, SEED + 1 + index, Date.now() + SECONDS * 1000);
    process.stdout.write(`${JSON.stringify(load)}\n`);
  } finally {
    await log.close();
  }
};

const runChild = (schema: string, index: number): Promise<LoadReport> =>
  new Promise((done, fail) => {
    const script = fileURLToPath(import.meta.url);
    const childArgs = ['--child', '--schema', schema, '--index', String(index), '--pg-agents', String(PG_AGENTS), '--steps', String(STEPS), '--seconds', String(SECONDS), '--seed', String(SEED)];
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...childArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      if (code !== 0) return fail(new Error(`soak child ${index} exited ${code}`));
      try {
        done(JSON.parse(out.trim().split('\n').at(-1) ?? '') as LoadReport);
      } catch (error) {
        fail(new Error(`soak child ${index} printed no report: ${String(error)}`));
      }
    });
  });

const postgresLoad = async (): Promise<CheckReport | undefined> => {
  if (!PG_URL) {
    const why = 'PostgreSQL part SKIPPED: CONTEXT_LEDGER_PG_URL is not set (bash scripts/with-postgres.sh npm run soak)';
    console.log(`\n${why}`);
    if (process.env['CI'] === 'true') throw new Error(`under CI the soak needs PostgreSQL: ${why}`);
    return undefined;
  }
  const pg = (await import('pg')).default;
  const { migrate, openPostgresLog } = await import('../src/postgres/index.js');
  const schema = `cl_soak_${randomBytes(5).toString('hex')}`;
  await migrate({ connectionString: PG_URL }, { schema });
  try {
    const loads = await Promise.all(Array.from({ length: PG_PROCESSES }, (_, i) => runChild(schema, i)));
    const load: LoadReport = {
      agents: loads.flatMap((l) => l.agents),
      latencies: loads.flatMap((l) => l.latencies),
      injected: loads.reduce((a, l) => ({ toolFailures: a.toolFailures + l.injected.toolFailures, modelErrors: a.modelErrors + l.injected.modelErrors, aborts: a.aborts + l.injected.aborts }), { toolFailures: 0, modelErrors: 0, aborts: 0 }),
      // from the first process's first step to the last one's end (their start-up is not load)
      startedAt: Math.min(...loads.map((l) => l.startedAt)),
      endedAt: Math.max(...loads.map((l) => l.endedAt)),
      maxRssKb: Math.max(...loads.map((l) => l.maxRssKb)),
    };
    const log = await openPostgresLog({ connectionString: PG_URL }, { schema });
    let checked: CheckReport;
    try {
      checked = await check(log, load.agents, SAMPLE);
    } finally {
      await log.close();
    }
    printLoad(`PostgreSQL: ${PG_PROCESSES} processes × ${PG_AGENTS} agents (peak RSS: the largest process)`, load, checked, load.maxRssKb);
    return checked;
  } finally {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
};

const main = async (): Promise<void> => {
  const [load1] = loadavg();
  console.log(`soak${quick ? ' --quick' : ''}: up to ${STEPS} steps per agent or ${SECONDS} s per store; seed ${SEED}; Node ${process.version}, ${cpus().length} cores, load average ${load1?.toFixed(1)}`);
  const dir = await mkdtemp(join(tmpdir(), 'context-ledger-soak-'));
  let total = { lost: 0, broken: 0 };
  try {
    const log = await openLevelLog(dir);
    let load: LoadReport;
    let checked: CheckReport;
    try {
      load = await runAgents(log, 'level', AGENTS, SEED, Date.now() + SECONDS * 1000);
      checked = await check(log, load.agents, SAMPLE);
    } finally {
      await log.close();
    }
    printLoad(`LevelDB: ${AGENTS} agents in one process`, load, checked, process.resourceUsage().maxRSS);
    total = { lost: checked.lost, broken: checked.broken.length };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const pgChecked = await postgresLoad();
  if (pgChecked) total = { lost: total.lost + pgChecked.lost, broken: total.broken + pgChecked.broken.length };
  console.log(`\n${total.lost} lost, ${total.broken} broken`);
  process.exitCode = total.lost === 0 && total.broken === 0 ? 0 : 1;
};

if (flag('--child')) await childMain();
else await main();
