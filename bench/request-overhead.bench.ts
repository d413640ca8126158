// The whole-request budget's cost per step at 10,000 items, warm: the request-overhead count (prompt, tools, framing of what is sent) beside a bare projection, and the whole projectRequest.
import { loadavg } from 'node:os';
import { TypeAwareContextProjector, openAiTokenizer, projectForModel, requestOverheadTokens } from '../src/context/index.js';
import type { ContextBudget } from '../src/context/index.js';
import { deepFreeze } from '../src/base/index.js';
import { functionCall, functionCallOutput, userMessage, assistantMessage } from '../src/items/index.js';
import type { MemoryItem } from '../src/items/index.js';
import { itemFramingTokens, projectRequest } from '../src/runtime/index.js';
import { argValue, judged, positiveInt, prng, quick, reportResults } from './support.js';

const ITEMS = positiveInt(argValue('--items'), quick ? 2_000 : 10_000, 'item count');
const RUNS = positiveInt(argValue('--runs'), quick ? 15 : 41, 'runs');
const TARGET_MS = 1;

const random = prng(19);
const words = ['read', 'file', 'src', 'index', 'test', 'error', 'function', 'return', 'const', 'value', 'the', 'a'];
const text = (n: number): string => Array.from({ length: n }, () => words[Math.floor(random() * words.length)]).join(' ');
const items: MemoryItem[] = [];
for (let k = 0; items.length < ITEMS; k++) {
  if (k % 10 === 0) items.push(userMessage(text(20)));
  items.push(functionCall(`call_${k}`, 'read_file', { path: `src/file_${k}.ts` }));
  items.push(functionCallOutput(`call_${k}`, text(40 + Math.floor(random() * 200))));
  if (k % 5 === 4) items.push(assistantMessage(text(30)));
}
items.length = ITEMS;
deepFreeze(items);

const tokenizer = openAiTokenizer('o200k_base');
const projector = new TypeAwareContextProjector({ tokenizer });
const systemPrompt = 'You are a careful coding agent working in a repository. '.repeat(40);
const tools = Array.from({ length: 20 }, (_, k) => ({
  type: 'function',
  name: `tool_${k}`,
  description: `Tool ${k}: ${text(20)}`,
  parameters: { type: 'object', properties: { path: { type: 'string', description: text(6) } }, required: ['path'] },
}));
const budget: ContextBudget = { maxTokens: 60_000, reserveOutputTokens: 4_000, maxRecentToolResults: 20, pinnedPrefixItems: 1 };

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};
const time = (run: () => unknown): number[] => {
  for (let i = 0; i < 3; i++) run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  return times;
};

const overheadTokens = requestOverheadTokens({ systemPrompt, tools }, tokenizer);
const allowance = { overheadTokens };
const bare = projectForModel(projector, items, budget);
// Interleaved rounds, so load on the machine hits all three alike.
const bareTimes: number[] = [];
const countTimes: number[] = [];
const wholeTimes: number[] = [];
for (let round = 0; round < 3; round++) {
  bareTimes.push(...time(() => projectForModel(projector, items, budget)));
  countTimes.push(
    ...time(() => {
      let total = requestOverheadTokens({ systemPrompt, tools }, tokenizer);
      for (const item of bare.items) total += itemFramingTokens(item, tokenizer);
      return total;
    }),
  );
  wholeTimes.push(...time(() => projectRequest(projector, items, budget, allowance, tokenizer)));
}
const whole = projectRequest(projector, items, budget, allowance, tokenizer);
const bareMs = median(bareTimes);
const countMs = median(countTimes);
const wholeMs = median(wholeTimes);
console.log(`request-overhead bench: ${ITEMS} items (${bare.items.length} sent bare, ${whole.items.length} within the whole request), o200k, warm, ${RUNS * 3} runs each, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`  bare projection (projectForModel)         median ${bareMs.toFixed(3)} ms`);
console.log(`  request-overhead count (prompt, 20 tools, framing of ${bare.items.length} items sent)  median ${countMs.toFixed(3)} ms  (target ≤ ${TARGET_MS} ms)`);
console.log(`  whole projectRequest                      median ${wholeMs.toFixed(3)} ms  (${(wholeMs / bareMs).toFixed(2)}x bare)`);
console.log(`  overhead ${overheadTokens} tokens, framing ${(whole.report.overheadTokens ?? 0) - overheadTokens} tokens`);
reportResults('request-overhead', [
  judged(`request-overhead count per step, ${ITEMS} items warm (bare projection ${bareMs.toFixed(2)} ms)`, `${countMs.toFixed(3)} ms`, `≤ ${TARGET_MS} ms`, countMs <= TARGET_MS, ITEMS === 10_000 ? undefined : '10,000 items'),
  { measure: 'projectRequest ÷ bare projection, warm', value: `${(wholeMs / bareMs).toFixed(2)}x`, target: '', verdict: '' },
]);
