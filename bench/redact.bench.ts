// Redaction benchmark: the cost of `redact: secretRedactor()` per event, on the real mini-SWE-agent runs (shared data).
//
//   npx tsx bench/redact.bench.ts            # every run, 5 rounds
//   npx tsx bench/redact.bench.ts --rounds 3
//
// Each run's messages become the events a session records (user inputs, model outputs, tool results). Per round, on
// fresh in-memory logs, the same events are appended one per call without and with the redactor (the side that goes
// first alternates); the redactor alone is timed on the same events too. Times are CPU time of this process
// (process.cpuUsage), so a loaded machine stretches them less than wall time. Reports the median per-event cost and the
// ratio (with / without). Skips when the shared data is absent.
import { cpus, loadavg } from 'node:os';
import type { NewSessionEvent } from '../src/events/index.js';
import { openMemoryLog, secretRedactor } from '../src/log/index.js';
import { fromChatCompletions } from '../src/runtime/providers/index.js';
import { loadTrajectories } from './corpus.js';
import { argValue, positiveInt } from './support.js';

const ROUNDS = positiveInt(argValue('--rounds'), 5, 'round count');
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

const appendAll = async (redact: boolean): Promise<number> => {
  const log = await openMemoryLog(redact ? { redact: secretRedactor() } : {});
  const start = process.cpuUsage();
  for (let i = 0; i < events.length; i++) await log.append(`s${i >> 10}`, [events[i] as NewSessionEvent]);
  const used = process.cpuUsage(start);
  await log.close();
  return ((used.user + used.system) * 1000) / events.length;
};

const redactorAlone = (): number => {
  const redact = secretRedactor();
  const start = process.cpuUsage();
  for (const event of events) redact(event);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / events.length;
};

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

console.log(`redact bench: ${runs.length} runs, ${events.length} events (${(bytes / events.length).toFixed(0)} chars on average), ${ROUNDS} rounds, Node ${process.version}, ${cpus().length} cores, load ${loadavg()[0]?.toFixed(1)}`);
const plain: number[] = [];
const redacted: number[] = [];
const alone: number[] = [];
const ratios: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  let a: number;
  let b: number;
  if (round % 2 === 1) {
    a = await appendAll(false);
    b = await appendAll(true);
  } else {
    b = await appendAll(true);
    a = await appendAll(false);
  }
  plain.push(a);
  redacted.push(b);
  alone.push(redactorAlone());
  ratios.push(b / a);
  console.log(`round ${round}/${ROUNDS}: append ${(a / 1000).toFixed(1)} µs, with redact ${(b / 1000).toFixed(1)} µs, redactor alone ${((alone[alone.length - 1] as number) / 1000).toFixed(1)} µs per event`);
}
const ratio = median(ratios);
console.log('');
console.log(`per event (medians): append ${(median(plain) / 1000).toFixed(1)} µs; with secretRedactor ${(median(redacted) / 1000).toFixed(1)} µs (ratio ${ratio.toFixed(2)}, +${((ratio - 1) * 100).toFixed(0)}%); the redactor alone ${(median(alone) / 1000).toFixed(1)} µs = ${((median(alone) / median(plain)) * 100).toFixed(0)}% of an append; target ≤ 10%: ${median(alone) / median(plain) <= 0.1 ? 'PASS' : 'MISS'}`);
console.log(`load average at the end: ${loadavg()[0]?.toFixed(1)}`);
