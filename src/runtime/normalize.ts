// Normalising what a model client returns before `model.responded` records it: every call gets a usable, unique id.
import { ContextLedgerError } from '../base/errors.js';
import { errorText, isRecord } from '../base/index.js';
import { toolCallName, type MemoryItem } from '../items/index.js';
import type { ModelUsage } from '../model/index.js';

/**
 * The model client returned an answer the runtime cannot record: not an object, `items` not an array, an item that is
 * not an object with a non-empty string `type`, or `outputText` that is not a string. The run fails with its message;
 * nothing of the answer enters memory.
 */
export class ModelAnswerError extends ContextLedgerError {
  static override readonly code = 'MODEL_ANSWER_UNUSABLE';
  constructor(message: string) {
    super(`the model client returned an unusable answer: ${message}`);
  }
}
/** @deprecated use ModelAnswerError.isInstance */ export const isModelAnswerError = (e: unknown): e is ModelAnswerError => ModelAnswerError.isInstance(e);

/** A model answer as the runtime records it. */
export interface NormalizedAnswer {
  readonly items: readonly MemoryItem[];
  readonly outputText?: string;
  readonly usage?: ModelUsage;
  readonly finishReason?: string;
  /** Calls the runtime answers with this error output instead of running them (the model sees why). */
  readonly rejected: ReadonlyMap<string, string>;
}

type Json = Record<string, unknown>;

const kindOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value);

/** Turns the model's answer into items whose calls all have a non-empty string id, unique within the answer. */
export const normalizeModelAnswer = (result: unknown, newId: () => string): NormalizedAnswer => {
  if (!isRecord(result)) throw new ModelAnswerError(`expected { items, outputText?, usage? }, got ${kindOf(result)}`);
  const rawItems = result['items'];
  if (!Array.isArray(rawItems)) throw new ModelAnswerError(`items is ${kindOf(rawItems)}, not an array`);
  const outputText = result['outputText'];
  if (outputText !== undefined && typeof outputText !== 'string') throw new ModelAnswerError(`outputText is ${kindOf(outputText)}, not a string`);
  const usage = result['usage'];
  if (usage !== undefined && usage !== null && !isRecord(usage)) throw new ModelAnswerError(`usage is ${kindOf(usage)}, not an object`);
  const finishReason = result['finishReason'];
  if (finishReason !== undefined && finishReason !== null && typeof finishReason !== 'string') throw new ModelAnswerError(`finishReason is ${kindOf(finishReason)}, not a string`);

  const seen = new Set<string>();
  const rejected = new Map<string, string>();
  /** A usable id for a call: the model's when it is a non-empty string (or a number), unique in this answer; else a fresh one. */
  const idFor = (raw: unknown): string => {
    let id = typeof raw === 'string' ? raw : typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : '';
    if (id === '' || seen.has(id)) id = newId();
    while (seen.has(id)) id = newId();
    seen.add(id);
    return id;
  };
  const argumentsText = (raw: unknown): string => {
    if (typeof raw === 'string') return raw;
    if (raw === undefined || raw === null) return '';
    try {
      return JSON.stringify(raw) ?? '';
    } catch (error) {
      return `[arguments that are not JSON: ${errorText(error)}]`;
    }
  };

  const items = rawItems.map((raw: unknown, index): MemoryItem => {
    if (!isRecord(raw)) throw new ModelAnswerError(`item #${index} is ${kindOf(raw)}, not an item object`);
    const type = raw['type'];
    if (typeof type !== 'string' || type === '') throw new ModelAnswerError(`item #${index} has no string type`);
    if (type === 'function_call') {
      const callId = idFor(raw['call_id']);
      const name = typeof raw['name'] === 'string' ? raw['name'] : '';
      if (name === '') rejected.set(callId, 'Error: this tool call has no tool name; it was not run');
      return { ...raw, type, call_id: callId, name, arguments: argumentsText(raw['arguments']) };
    }
    if (type !== 'message') return raw as MemoryItem;
    let item: Json = raw;
    const toolCalls = raw['tool_calls'];
    if (toolCalls === null) {
      const { tool_calls: _dropped, ...rest } = raw;
      item = rest;
    } else if (toolCalls !== undefined) {
      if (!Array.isArray(toolCalls)) throw new ModelAnswerError(`item #${index} has tool_calls that is ${kindOf(toolCalls)}, not an array`);
      item = {
        ...item,
        tool_calls: toolCalls.map((call: unknown, k) => {
          if (!isRecord(call)) {
            const id = idFor(undefined);
            rejected.set(id, `Error: tool call #${k} of this message could not be read (${kindOf(call)}); it was not run`);
            return { id, type: 'function', function: { name: '', arguments: '' } };
          }
          const id = idFor(call['id']);
          const fn = call['function'];
          const fixed: Json = { ...call, id };
          if (isRecord(fn)) fixed['function'] = { ...fn, name: typeof fn['name'] === 'string' ? fn['name'] : '', arguments: argumentsText(fn['arguments']) };
          else if ('arguments' in call) fixed['arguments'] = argumentsText(call['arguments']);
          if (!toolCallName(fixed as never)) rejected.set(id, 'Error: this tool call has no tool name; it was not run');
          return fixed;
        }),
      };
    }
    const content = item['content'];
    if (Array.isArray(content) && content.some((part: unknown) => isRecord(part) && part['type'] === 'tool_use')) {
      item = {
        ...item,
        content: content.map((part: unknown) => (isRecord(part) && part['type'] === 'tool_use' ? { ...part, id: idFor(part['id']) } : part)),
      };
    }
    return item as MemoryItem;
  });
  return {
    items,
    ...(outputText !== undefined ? { outputText } : {}),
    ...(isRecord(usage) ? { usage: usage as ModelUsage } : {}),
    ...(typeof finishReason === 'string' && finishReason !== '' ? { finishReason } : {}),
    rejected,
  };
};
