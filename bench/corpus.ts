// The benchmarks' corpora: a seeded synthetic agent session in Chat Completions shape, a seeded stream of session
// events, and the real mini-SWE-agent runs.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NewSessionEvent } from '../src/events/index.js';
import type { ChatMessage } from './peers/ensure.js';
import { prng, type Random } from './support.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
/** Where the real runs are read from (in place, never copied): `$CONTEXT_LEDGER_TRAJECTORIES` or ../shared/data/swe-trajectories. */
export const trajectoriesDir = resolve(
  process.env['CONTEXT_LEDGER_TRAJECTORIES'] ?? join(benchDir, '..', '..', 'shared', 'data', 'swe-trajectories'),
);

// ------------------------------------------------------------------------------------------------ session events

const CODE_WORDS = (
  'const let function return import export from await async class interface type extends implements new this ' +
  'error test passed failed expected received file path src index module build lint fix refactor rename parser ' +
  'session event memory compact summary checkpoint resume fold log level batch append read write edit'
).split(' ');

/**
 * A deterministic stream of the events of a long coding session (what `bench/resume.bench.ts` and the resume curve of
 * `bench/curves.bench.ts` append): a user turn every 50 steps, otherwise an assistant message with a tool call
 * followed by its result (a few hundred characters), and now and then a `command.failed` or `test.result` fact.
 */
export const codingSessionEvents = (seed: number): (() => NewSessionEvent) => {
  const random = prng(seed);
  const words = (n: number): string => Array.from({ length: n }, () => CODE_WORDS[Math.floor(random() * CODE_WORDS.length)]).join(' ');
  const tools = ['read_file', 'edit_file', 'bash', 'grep', 'write_file', 'run_tests'];
  let step = 0;
  let pendingCall: string | undefined;
  return (): NewSessionEvent => {
    if (pendingCall !== undefined) {
      const callId = pendingCall;
      pendingCall = undefined;
      return { type: 'tool.result', callId, output: words(40 + Math.floor(random() * 40)) };
    }
    step += 1;
    if (step % 50 === 1) return { type: 'user.input', items: [{ type: 'message', role: 'user', content: words(30) }] };
    if (step % 97 === 0) return { type: 'command.failed', command: `npm run ${words(1)}`, exitCode: 1, error: words(12) };
    if (step % 89 === 0) return { type: 'test.result', status: random() < 0.5 ? 'passed' : 'failed', suite: words(2), passed: 40, failed: 2 };
    const callId = `call_${step}`;
    pendingCall = callId;
    const name = pick(random, tools);
    return {
      type: 'model.output',
      items: [
        { type: 'message', role: 'assistant', content: words(12) },
        { type: 'function_call', call_id: callId, name, arguments: JSON.stringify({ path: `src/${words(1)}/${words(1)}.ts`, note: words(6) }) },
      ],
    };
  };
};

// ------------------------------------------------------------------------------------------------ synthetic data

const WORDS = (
  'the a of to and in is that for it with as on be this by are from at or an not have we can will if but which ' +
  'when should would could then there their them these those was were been has had more most other some such only ' +
  'also into over after before between under again further once here why how all any both each few same so than too ' +
  'very test tests failing passes error errors value values function method class module package file files path line ' +
  'lines config option options default returns return argument arguments parameter result results output input request ' +
  'response cache index token tokens budget context memory event events session projection projector item items message ' +
  'messages tool call calls user assistant system model prompt stream buffer queue worker thread process timeout retry ' +
  'limit database query schema table column migration record field type types interface struct enum variant trait ' +
  'compile build lint format deploy release version branch commit merge rebase diff patch issue review change changes ' +
  'fix bug regression edge case null undefined empty string number boolean array object map set list dict tuple'
).split(' ');
const IDENTIFIERS = [
  'parseConfig', 'loadSession', 'projectContext', 'foldMemory', 'appendEvents', 'readStream', 'tokenCount',
  'handleRequest', 'validateInput', 'renderTemplate', 'computeHash', 'flushBuffer', 'openLog', 'resolvePath',
  'retryWithBackoff', 'get_queryset', 'test_reverse', 'migrate_schema', 'to_python', 'clean_fields', '__init__',
  'from_db_value', 'as_sql',
];
const TOOLS = ['bash', 'read_file', 'search_code', 'edit_file', 'run_tests'];

const pick = <T>(random: Random, values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
const between = (random: Random, low: number, high: number): number => low + Math.floor(random() * (high - low + 1));

const prose = (random: Random, chars: number): string => {
  let text = '';
  let words = 0;
  while (text.length < chars) {
    const word = random() < 0.08 ? pick(random, IDENTIFIERS) : pick(random, WORDS);
    text += words === 0 ? word.charAt(0).toUpperCase() + word.slice(1) : word;
    words += 1;
    if (words > 6 && random() < 0.15) {
      text += random() < 0.2 ? '.\n' : '. ';
      words = 0;
    } else text += random() < 0.06 ? ', ' : ' ';
  }
  return text.slice(0, chars);
};

const toolOutput = (random: Random, chars: number): string => {
  const lines: string[] = [];
  let length = 0;
  while (length < chars) {
    const file = `src/${pick(random, WORDS)}_${between(random, 1, 40)}/${pick(random, IDENTIFIERS)}.py`;
    const kind = random();
    const line =
      kind < 0.4
        ? `${file}:${between(random, 1, 900)}:    ${pick(random, IDENTIFIERS)}(${pick(random, WORDS)}, ${between(random, 0, 999)})`
        : kind < 0.7
          ? `    ${pick(random, WORDS)}_${pick(random, WORDS)} = self.${pick(random, IDENTIFIERS)}(${pick(random, WORDS)}=${between(random, 0, 99)})`
          : kind < 0.85
            ? `E   AssertionError: expected ${between(random, 0, 9999)} but got ${between(random, 0, 9999)} in ${pick(random, IDENTIFIERS)}`
            : prose(random, between(random, 30, 90));
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join('\n').slice(0, chars);
};

/**
 * A deterministic agent session in Chat Completions shape: a system prompt, then user turns, each followed by one
 * to six tool steps (an assistant message with one to three tool calls, then their results; 3% of results are
 * 4-10k characters) and usually a final answer. Exactly `count` messages, ending with a tool result (the next thing
 * is a model call).
 */
export const syntheticConversation = (count: number, seed: number): ChatMessage[] => {
  const random = prng(seed);
  const messages: ChatMessage[] = [{ role: 'system', content: prose(random, 1_800) }];
  let callNumber = 0;
  const toolStep = (calls: number): void => {
    const toolCalls = Array.from({ length: calls }, () => {
      const name = pick(random, TOOLS);
      const args = JSON.stringify(
        name === 'bash'
          ? { command: `cd /repo && grep -rn "${pick(random, IDENTIFIERS)}" src/ | head -${between(random, 5, 80)}` }
          : { path: `src/${pick(random, WORDS)}/${pick(random, IDENTIFIERS)}.py`, query: prose(random, between(random, 10, 120)) },
      );
      const id = `call_${(callNumber++).toString(36).padStart(6, '0')}`;
      return { id, type: 'function' as const, function: { name, arguments: args } };
    });
    messages.push({
      role: 'assistant',
      content: random() < 0.5 ? prose(random, between(random, 40, 400)) : null,
      tool_calls: toolCalls,
    });
    for (const call of toolCalls) {
      const size = random() < 0.03 ? between(random, 4_000, 10_000) : between(random, 80, 700);
      messages.push({ role: 'tool', tool_call_id: call.id, content: toolOutput(random, size) });
    }
  };
  while (messages.length < count) {
    const remaining = count - messages.length;
    if (remaining <= 8) {
      if (remaining === 1) messages.push({ role: 'user', content: prose(random, 300) });
      else if (remaining <= 4) toolStep(remaining - 1);
      else {
        messages.push({ role: 'user', content: prose(random, 300) });
        toolStep(remaining - 2);
      }
      continue;
    }
    messages.push({ role: 'user', content: prose(random, between(random, 100, 900)) });
    const steps = between(random, 1, 6);
    for (let step = 0; step < steps && count - messages.length > 12; step += 1) toolStep(between(random, 1, 3));
    if (count - messages.length > 9) messages.push({ role: 'assistant', content: prose(random, between(random, 200, 1_200)) });
  }
  return messages;
};

export const messageChars = (messages: readonly ChatMessage[]): number => {
  let chars = 0;
  for (const message of messages) {
    chars += message.content?.length ?? 0;
    chars += message.reasoning_content?.length ?? 0;
    for (const call of message.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length;
  }
  return chars;
};

// ------------------------------------------------------------------------------------------------ real runs

const CHAT_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** Keeps what a Chat Completions request carries (mini-SWE-agent's metadata keys and `exit` message are left out). */
export const normalizeChat = (raw: unknown): ChatMessage[] => {
  if (!Array.isArray(raw)) return [];
  const messages: ChatMessage[] = [];
  for (const entry of raw) {
    if (entry === null || typeof entry !== 'object') continue;
    const m = entry as Record<string, unknown>;
    const role = m['role'];
    if (typeof role !== 'string' || !CHAT_ROLES.has(role)) continue;
    const content = typeof m['content'] === 'string' ? m['content'] : m['content'] == null ? null : JSON.stringify(m['content']);
    const rawCalls = Array.isArray(m['tool_calls']) ? (m['tool_calls'] as Record<string, unknown>[]) : [];
    const toolCalls = rawCalls.map((call) => {
      const fn = (call['function'] ?? {}) as Record<string, unknown>;
      return {
        id: String(call['id']),
        type: 'function' as const,
        function: {
          name: String(fn['name'] ?? ''),
          arguments: typeof fn['arguments'] === 'string' ? fn['arguments'] : JSON.stringify(fn['arguments'] ?? {}),
        },
      };
    });
    messages.push({
      role: role as ChatMessage['role'],
      content,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      ...(typeof m['tool_call_id'] === 'string' ? { tool_call_id: m['tool_call_id'] } : {}),
      ...(typeof m['reasoning_content'] === 'string' ? { reasoning_content: m['reasoning_content'] } : {}),
    });
  }
  return messages;
};

export interface Trajectory {
  readonly name: string;
  readonly chat: ChatMessage[];
}

/** The real runs as Chat Completions messages, by file name; undefined when the directory is absent. */
export const loadTrajectories = (): Trajectory[] | undefined => {
  if (!existsSync(trajectoriesDir)) return undefined;
  return readdirSync(trajectoriesDir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => {
      const data = JSON.parse(readFileSync(join(trajectoriesDir, name), 'utf8')) as { messages?: unknown };
      return { name: name.replace(/\.traj\.json$|\.json$/, ''), chat: normalizeChat(data.messages) };
    });
};

