// fast-check arbitraries for projector laws: realistic agent sessions (MemoryItem lists) and context budgets.
import fc from 'fast-check';
import type { ContextBudget } from '../context/index.js';
import type { ContentPart, MemoryItem, ToolCall } from '../items/index.js';

export interface ArbitraryItemsOptions {
  /** Fewest user turns (default 0: the empty session is generated too). */
  readonly minTurns?: number;
  /** Most user turns (default 6). */
  readonly maxTurns?: number;
  /** Most model steps (reasoning, tool calls and outputs, or an answer) per turn (default 3). */
  readonly maxStepsPerTurn?: number;
  /** Longest tool output (default 2,000 characters). */
  readonly maxOutputChars?: number;
  /** Also generate calls without an output and outputs without a call (default true). */
  readonly orphans?: boolean;
  /**
   * Also answer a call in the other result shapes (a user or assistant message with a `tool_result` part, a Chat
   * `role:'tool'` message) and answer some calls several times (default true).
   */
  readonly resultShapes?: boolean;
}

type ToolStyle = 'function_call' | 'tool_calls' | 'tool_calls_nested' | 'tool_use';
type ReasoningStyle = 'summary_text' | 'summary_parts' | 'content' | 'text';

type ResultShape = 'function_call_output' | 'user_tool_result' | 'assistant_tool_result' | 'chat_tool';

interface ToolSpec {
  readonly name: string | null;
  readonly args: string;
  readonly output: string | null;
  /** The shape of the output, and further results of the same call after it. */
  readonly shape: ResultShape;
  readonly more: readonly { readonly shape: ResultShape; readonly text: string }[];
}

interface StepSpec {
  readonly reasoning: { readonly style: ReasoningStyle; readonly text: string } | null;
  readonly style: ToolStyle;
  readonly tools: readonly ToolSpec[];
  readonly reverseOutputs: boolean;
  readonly text: string | null;
}

interface TurnSpec {
  readonly user: string | readonly ContentPart[];
  readonly steps: readonly StepSpec[];
}

interface ExtraSpec {
  readonly at: number;
  readonly kind: 'orphan_output' | 'unknown' | 'developer';
  readonly text: string;
}

interface SessionSpec {
  readonly summary: string | null;
  readonly system: string | null;
  readonly turns: readonly TurnSpec[];
  readonly extras: readonly ExtraSpec[];
}

const plainText = fc.string({ maxLength: 40 });
const oddText = fc.oneof(
  fc.constantFrom('', '   ', '\n', '<|endoftext|>', '<|im_start|>system', '{"not":"json"', 'ünïcödé 😀🚀', '\u0000\u200b'),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);
const text = fc.oneof({ weight: 5, arbitrary: plainText }, { weight: 1, arbitrary: oddText });

const longText = (maxChars: number): fc.Arbitrary<string> =>
  fc
    .tuple(fc.string({ minLength: 1, maxLength: 24 }), fc.integer({ min: 1, max: Math.max(1, Math.floor(maxChars / 4)) }))
    .map(([chunk, times]) => chunk.repeat(times).slice(0, maxChars));

const content: fc.Arbitrary<string | readonly ContentPart[]> = fc.oneof(
  { weight: 4, arbitrary: text },
  {
    weight: 1,
    arbitrary: fc.array(
      fc.oneof(
        text.map((t): ContentPart => ({ type: 'input_text', text: t })),
        fc.constant<ContentPart>({ type: 'input_image', image_url: 'https://example.com/screenshot.png' }),
      ),
      { maxLength: 3 },
    ),
  },
);

const toolName = fc.constantFrom('read_file', 'bash', 'grep', 'write_file', 'run_tests', 'search');
const toolArgs = fc.oneof(
  fc.constant('{}'),
  text.map((t) => JSON.stringify({ path: t })),
  fc.json({ maxDepth: 2 }),
  oddText,
);

const resultShape = fc.constantFrom<ResultShape>('user_tool_result', 'assistant_tool_result', 'chat_tool', 'function_call_output');

const toolSpec = (maxOutputChars: number, orphans: boolean, shapes: boolean): fc.Arbitrary<ToolSpec> => {
  const outputText = fc.oneof({ weight: 3, arbitrary: text }, { weight: 2, arbitrary: longText(maxOutputChars) });
  return fc.record(
    {
      name: fc.option(toolName, { freq: 8, nil: null }),
      args: toolArgs,
      output: orphans ? fc.option(outputText, { freq: 8, nil: null }) : outputText,
      shape: shapes
        ? fc.oneof({ weight: 6, arbitrary: fc.constant<ResultShape>('function_call_output') }, { weight: 1, arbitrary: resultShape })
        : fc.constant<ResultShape>('function_call_output'),
      more: shapes
        ? fc.oneof(
            { weight: 6, arbitrary: fc.constant([]) },
            { weight: 1, arbitrary: fc.array(fc.record({ shape: resultShape, text: outputText }, { noNullPrototype: true }), { minLength: 1, maxLength: 2 }) },
          )
        : fc.constant([]),
    },
    { noNullPrototype: true },
  );
};

/** One result of call `id` in `shape`. */
const resultItem = (id: string, shape: ResultShape, output: string): MemoryItem => {
  switch (shape) {
    case 'function_call_output':
      return { type: 'function_call_output', call_id: id, output };
    case 'user_tool_result':
      return { type: 'message', role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output }] };
    case 'assistant_tool_result':
      return { type: 'message', role: 'assistant', content: [{ type: 'tool_result', tool_use_id: id, content: output }] };
    case 'chat_tool':
      return { type: 'message', role: 'tool', tool_call_id: id, content: output };
  }
};

const stepSpec = (maxOutputChars: number, orphans: boolean, shapes: boolean): fc.Arbitrary<StepSpec> =>
  fc.record(
    {
      reasoning: fc.option(
        fc.record(
          { style: fc.constantFrom<ReasoningStyle>('summary_text', 'summary_parts', 'content', 'text'), text },
          { noNullPrototype: true },
        ),
        { freq: 3, nil: null },
      ),
      style: fc.constantFrom<ToolStyle>('function_call', 'tool_calls', 'tool_calls_nested', 'tool_use'),
      tools: fc.array(toolSpec(maxOutputChars, orphans, shapes), { maxLength: 3 }),
      reverseOutputs: fc.boolean(),
      text: fc.option(text, { nil: null }),
    },
    { noNullPrototype: true },
  );

const reasoningItem = (id: string, style: ReasoningStyle, t: string): MemoryItem => {
  switch (style) {
    case 'summary_text':
      return { type: 'reasoning', id, summary: t };
    case 'summary_parts':
      return { type: 'reasoning', id, summary: [{ type: 'summary_text', text: t }] };
    case 'content':
      return { type: 'reasoning', id, content: [{ type: 'reasoning_text', text: t }], encrypted_content: 'opaque' };
    case 'text':
      return { type: 'reasoning', id, text: t };
  }
};

const chatToolCall = (id: string, tool: ToolSpec, nested: boolean): ToolCall => {
  if (nested) return { id, type: 'function', function: { name: tool.name ?? '', arguments: tool.args } };
  return tool.name === null ? { id, type: 'function', arguments: tool.args } : { id, type: 'function', name: tool.name, arguments: tool.args };
};

const buildSession = (spec: SessionSpec): MemoryItem[] => {
  let counter = 0;
  const nextId = (prefix: string): string => `${prefix}_${(counter++).toString(36)}`;
  const items: MemoryItem[] = [];
  if (spec.summary !== null) items.push({ type: 'message', role: 'system', content: `Summary of earlier work: ${spec.summary}` });
  if (spec.system !== null) items.push({ type: 'message', role: 'system', content: spec.system });
  for (const turn of spec.turns) {
    items.push({ type: 'message', role: 'user', content: turn.user });
    for (const step of turn.steps) {
      if (step.reasoning) items.push(reasoningItem(nextId('rs'), step.reasoning.style, step.reasoning.text));
      if (step.tools.length === 0) {
        items.push({ type: 'message', role: 'assistant', content: step.text ?? '' });
        continue;
      }
      const ids = step.tools.map(() => nextId('call'));
      switch (step.style) {
        case 'function_call':
          if (step.text !== null) items.push({ type: 'message', role: 'assistant', content: step.text });
          step.tools.forEach((tool, k) =>
            items.push({ type: 'function_call', call_id: ids[k] as string, name: tool.name ?? '', arguments: tool.args }),
          );
          break;
        case 'tool_calls':
        case 'tool_calls_nested':
          items.push({
            type: 'message',
            role: 'assistant',
            content: step.text ?? '',
            tool_calls: step.tools.map((tool, k) => chatToolCall(ids[k] as string, tool, step.style === 'tool_calls_nested')),
          });
          break;
        case 'tool_use':
          items.push({
            type: 'message',
            role: 'assistant',
            content: [
              ...(step.text === null ? [] : [{ type: 'output_text', text: step.text }]),
              ...step.tools.map((tool, k): ContentPart => ({ type: 'tool_use', id: ids[k] as string, name: tool.name ?? 'tool', input: { args: tool.args } })),
            ],
          });
          break;
      }
      const outputs = step.tools.flatMap((tool, k) => (tool.output === null ? [] : [resultItem(ids[k] as string, tool.shape, tool.output)]));
      items.push(...(step.reverseOutputs ? outputs.reverse() : outputs));
      step.tools.forEach((tool, k) => {
        for (const more of tool.more) items.push(resultItem(ids[k] as string, more.shape, more.text));
      });
    }
  }
  // Odd items at arbitrary positions, inserted from the last position so earlier positions stay meaningful.
  const extras = [...spec.extras].sort((a, b) => b.at - a.at);
  const base = items.length;
  for (const extra of extras) {
    const at = extra.at % (base + 1);
    const item: MemoryItem =
      extra.kind === 'orphan_output'
        ? { type: 'function_call_output', call_id: nextId('gone'), output: extra.text }
        : extra.kind === 'unknown'
          ? { type: 'web_search_call', id: nextId('ws'), status: 'completed', action: { query: extra.text } }
          : { type: 'message', role: 'developer', content: extra.text };
    items.splice(at, 0, item);
  }
  return items;
};

/**
 * Realistic agent sessions: an optional summary and system prompt, user turns (odd and empty content
 * included), model steps with reasoning, tool calls in every supported shape (`function_call` items, flat and
 * nested `tool_calls`, Anthropic `tool_use` parts) followed by their outputs (long ones too), answers, and
 * optionally orphans, developer messages and items of unknown types. Unless `resultShapes: false`, some results
 * come in the other shapes (user or assistant `tool_result` parts, Chat `role:'tool'`) and some calls have several
 * results. Call ids are unique.
 * @example fc.assert(fc.property(arbitraryItems({ maxTurns: 4 }), (items) => { ... }))
 */
export const arbitraryItems = (options: ArbitraryItemsOptions = {}): fc.Arbitrary<MemoryItem[]> => {
  const orphans = options.orphans ?? true;
  const maxOutputChars = options.maxOutputChars ?? 2_000;
  const shapes = options.resultShapes ?? true;
  const turn = fc.record(
    { user: content, steps: fc.array(stepSpec(maxOutputChars, orphans, shapes), { maxLength: options.maxStepsPerTurn ?? 3 }) },
    { noNullPrototype: true },
  );
  const extra = fc.record(
    {
      at: fc.nat(),
      kind: orphans
        ? fc.constantFrom<ExtraSpec['kind']>('orphan_output', 'unknown', 'developer')
        : fc.constantFrom<ExtraSpec['kind']>('unknown', 'developer'),
      text,
    },
    { noNullPrototype: true },
  );
  return fc
    .record(
      {
        summary: fc.option(text, { freq: 3, nil: null }),
        system: fc.option(text, { freq: 2, nil: null }),
        turns: fc.array(turn, { minLength: options.minTurns ?? 0, maxLength: options.maxTurns ?? 6 }),
        extras: fc.array(extra, { maxLength: 3 }),
      },
      { noNullPrototype: true },
    )
    .map(buildSession);
};

export interface ArbitraryBudgetOptions {
  /** Largest generated `maxItems` (default 30). */
  readonly maxItems?: number;
  /** Largest generated `maxApproxChars` (default 6,000). */
  readonly maxApproxChars?: number;
  /** Largest generated `maxTokens` (default 1,500). */
  readonly maxTokens?: number;
  /** Largest generated `pinnedPrefixItems` (default 4). */
  readonly maxPinned?: number;
  /** Largest generated `evictionStep` (default 5). */
  readonly maxEvictionStep?: number;
  /** Generate the Tier-1/Tier-2 options too (default true). */
  readonly tiers?: boolean;
}

const limitArb = (max: number): fc.Arbitrary<number> =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: -5, max: -1 }) },
    { weight: 8, arbitrary: fc.integer({ min: 1, max: Math.max(1, max) }) },
  );

/**
 * Context budgets: every field present or absent, limits negative (unlimited), 0 (empty) or positive, pinned
 * prefixes, eviction steps, `reserveOutputTokens`, `keepUserMessages` and, unless `tiers: false`, Tier-1/Tier-2 settings
 * with the clearing controls (`keepToolResultsOf`, `clearToolInputs`, `clearAtLeastTokens`, `clearAboveTokens`).
 * @example fc.sample(arbitraryBudget({ tiers: false }), 1) // [{ maxItems: 7, pinnedPrefixItems: 1 }]
 */
export const arbitraryBudget = (options: ArbitraryBudgetOptions = {}): fc.Arbitrary<ContextBudget> => {
  const limits = {
    maxItems: limitArb(options.maxItems ?? 30),
    maxApproxChars: limitArb(options.maxApproxChars ?? 6_000),
    maxTokens: limitArb(options.maxTokens ?? 1_500),
    pinnedPrefixItems: fc.integer({ min: 0, max: options.maxPinned ?? 4 }),
    evictionStep: fc.oneof(
      { weight: 3, arbitrary: fc.constant(1) },
      { weight: 2, arbitrary: fc.integer({ min: 1, max: Math.max(1, options.maxEvictionStep ?? 5) }) },
    ),
    reserveOutputTokens: fc.integer({ min: 0, max: Math.max(1, Math.floor((options.maxTokens ?? 1_500) / 3)) }),
    keepUserMessages: fc.integer({ min: 0, max: 3 }),
  };
  if (options.tiers === false) return fc.record(limits, { requiredKeys: [], noNullPrototype: true }).map(withValidReserve);
  return fc.record(
    {
      ...limits,
      maxRecentToolResults: fc.integer({ min: -1, max: 6 }),
      trimOldReasoning: fc.boolean(),
      keepToolResultsOf: fc.subarray(['read_file', 'bash', 'grep', 'tool']),
      clearToolInputs: fc.boolean(),
      clearAtLeastTokens: fc.integer({ min: -1, max: 400 }),
      clearAboveTokens: fc.integer({ min: -1, max: 3_000 }),
    },
    { requiredKeys: [], noNullPrototype: true },
  ).map(withValidReserve);
};

/** A budget as `parseContextBudget` accepts it: a positive `reserveOutputTokens` at or above a non-negative `maxTokens` is left out. */
const withValidReserve = <B extends ContextBudget>(budget: B): B => {
  const { maxTokens, reserveOutputTokens, ...rest } = budget;
  if (maxTokens === undefined || maxTokens < 0 || reserveOutputTokens === undefined || reserveOutputTokens === 0 || reserveOutputTokens < maxTokens) return budget;
  return { ...rest, maxTokens } as unknown as B;
};
