// Redaction benchmark: the cost of `redact: secretRedactor()` per event, on the real mini-SWE-agent runs (shared data).
//
//   npm run bench -- redact                                # every run, 5 rounds
//   npx tsx bench/redact.bench.ts --rounds 3
//   npx tsx bench/redact.bench.ts --before /work/main      # also another checkout's redactor, in the same rounds
//
// Each run's messages become the events a session records (user inputs, model outputs, tool results). Per round, on
// fresh in-memory logs, the same events are appended one per call without and with the redactor (the side that goes
// first alternates); the redactor alone is timed on the same events too. One round before the timed ones warms the
// JIT up and is not counted (a long session runs the redactor on every append, so its steady cost is what counts).
// Times are CPU time of this process (process.cpuUsage), so a loaded machine stretches them less than wall time.
// Reports the median per-event cost and the ratio (with / without). `--before DIR` times the redactor and the log of
// the checkout at DIR (its src/, not built) in the same rounds, before this checkout's. Skips when the shared data is
// absent.
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { NewSessionEvent } from '../src/events/index.js';
import * as here from '../src/log/index.js';
import { fromChatCompletions } from '../src/providers/index.js';
import { loadTrajectories } from './corpus.js';
import { argValue, judged, loadNow, positiveInt, reportResults, type BenchResult } from './support.js';

const ROUNDS = positiveInt(argValue('--rounds'), 5, 'round count');
const BEFORE = argValue('--before');
const runs = loadTrajectories();
if (!runs) {
  console.log('redact bench: skipped (no shared data at ../shared/data/swe-trajectories)');
  process.exit(0);
}

const events: NewSessionEvent[] = [];
for (const run of runs) {
  for (const message of run.chat) {
    const items = fromChatCompletions([message]);
    if (message.role === 'tool') {
      for (const item of items) {
        const output = (item as { output?: unknown }).output;
        events.push({ type: 'tool.result', callId: String((item as { call_id?: unknown }).call_id ?? 'c'), output: typeof output === 'string' ? output : JSON.stringify(output) } as NewSessionEvent);
      }
    } else if (items.length > 0) {
      events.push({ type: message.role === 'user' ? 'user.input' : 'model.output', items } as NewSessionEvent);
    }
  }
}
const bytes = events.reduce((n, e) => n + JSON.stringify(e).length, 0);

/** What a checkout gives the bench: its memory log and its redactor. */
interface Checkout {
  readonly name: string;
  readonly openMemoryLog: typeof here.openMemoryLog;
  readonly secretRedactor: typeof here.secretRedactor;
}
const checkouts: Checkout[] = [];
if (BEFORE !== undefined) {
  const other = (await import(pathToFileURL(join(resolve(BEFORE), 'src', 'log', 'index.ts')).href)) as typeof here;
  checkouts.push({ name: 'before', openMemoryLog: other.openMemoryLog, secretRedactor: other.secretRedactor });
}
checkouts.push({ name: BEFORE !== undefined ? 'after' : 'this checkout', openMemoryLog: here.openMemoryLog, secretRedactor: here.secretRedactor });

const appendAll = async (checkout: Checkout, redact: boolean): Promise<number> => {
  const log = await checkout.openMemoryLog(redact ? { redact: checkout.secretRedactor() } : {});
  const start = process.cpuUsage();
  for (let i = 0; i < events.length; i++) await log.append(`s${i >> 10}`, [events[i] as NewSessionEvent]);
  const used = process.cpuUsage(start);
  await log.close();
  return ((used.user + used.system) * 1000) / events.length;
};

const redactorAlone = (checkout: Checkout): number => {
  const redact = checkout.secretRedactor();
  const start = process.cpuUsage();
  for (const event of events) redact(event);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / events.length;
};

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

interface Figures {
  plain: number[];
  redacted: number[];
  alone: number[];
  ratios: number[];
}
const figures = new Map<string, Figures>(checkouts.map((checkout) => [checkout.name, { plain: [], redacted: [], alone: [], ratios: [] }]));

/** One round of a checkout: append without and with the redactor (which first alternates), then the redactor alone. */
const round = async (checkout: Checkout, round: number): Promise<{ plain: number; redacted: number; alone: number }> => {
  let plain: number;
  let redacted: number;
  if (round % 2 === 1) {
    plain = await appendAll(checkout, false);
    redacted = await appendAll(checkout, true);
  } else {
    redacted = await appendAll(checkout, true);
    plain = await appendAll(checkout, false);
  }
  return { plain, redacted, alone: redactorAlone(checkout) };
};

const µs = (ns: number): string => `${(ns / 1000).toFixed(1)} µs`;
console.log(
  `redact bench: ${runs.length} runs, ${events.length} events (${(bytes / events.length).toFixed(0)} chars on average), 1 warm-up + ${ROUNDS} rounds, ${checkouts.map((c) => (c.name === 'before' ? `before = ${resolve(BEFORE as string)}` : c.name)).join(', ')}, Node ${process.version}, ${cpus().length} cores, load ${loadNow()}`,
);
const loads: number[] = [];
for (const checkout of checkouts) await round(checkout, 0);
for (let r = 1; r <= ROUNDS; r++) {
  // The checkouts take turns going first, so neither always runs on a warmer (or more loaded) machine.
  const order = r % 2 === 1 ? checkouts : [...checkouts].reverse();
  for (const checkout of order) {
    const f = await round(checkout, r);
    const mine = figures.get(checkout.name) as Figures;
    mine.plain.push(f.plain);
    mine.redacted.push(f.redacted);
    mine.alone.push(f.alone);
    mine.ratios.push(f.redacted / f.plain);
    console.log(`round ${r}/${ROUNDS} ${checkout.name}: append ${µs(f.plain)}, with redact ${µs(f.redacted)}, redactor alone ${µs(f.alone)} per event`);
  }
  loads.push(loadavg()[0] ?? NaN);
}

console.log('');
const load = `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`;
const results: BenchResult[] = [];
for (const checkout of checkouts) {
  const f = figures.get(checkout.name) as Figures;
  const ratio = median(f.ratios);
  const share = median(f.alone) / median(f.plain);
  console.log(
    `${checkout.name}, per event (medians): append ${µs(median(f.plain))}; with secretRedactor ${µs(median(f.redacted))} (ratio ${ratio.toFixed(2)}, +${((ratio - 1) * 100).toFixed(0)}%); the redactor alone ${µs(median(f.alone))} = ${(share * 100).toFixed(0)}% of an append; target ≤ 10%: ${share <= 0.1 ? 'PASS' : 'MISS'}`,
  );
  const label = checkouts.length > 1 ? ` (${checkout.name})` : '';
  results.push(judged(`secretRedactor alone ÷ append${label}`, `${(share * 100).toFixed(0)}%`, '<= 10%', share <= 0.1, undefined, load));
  results.push({ measure: `append with ÷ without secretRedactor${label}`, value: ratio.toFixed(2), target: '', verdict: '', load });
}
console.log(`load average during the rounds: ${load}`);
reportResults('redact', results);
