// Joins between tool calls and their outputs, across the shapes calls come in.
import { isFunctionCall, isFunctionCallOutput, isMessage, toolCallArguments, toolCallName } from './helpers.js';
import type { MemoryItem } from './types.js';

/** The call ids an item issues: `function_call.call_id`, `tool_calls[].id`, and Anthropic `tool_use` parts. */
export const callIdsOf = (item: MemoryItem): string[] => {
  if (isFunctionCall(item)) return [item.call_id];
  if (isMessage(item)) {
    const ids: string[] = [];
    if (Array.isArray(item.tool_calls)) {
      for (const call of item.tool_calls) if (call && typeof call.id === 'string') ids.push(call.id);
    }
    if (Array.isArray(item.content)) {
      for (const part of item.content) {
        if (part && part.type === 'tool_use' && typeof part['id'] === 'string') ids.push(part['id']);
      }
    }
    return ids;
  }
  return [];
};

/** The call id an output answers, or undefined for items that are not outputs. */
export const outputCallIdOf = (item: MemoryItem): string | undefined =>
  isFunctionCallOutput(item) ? item.call_id : undefined;

/**
 * Map from call id to tool name, joined through `function_call` items, `tool_calls[]` (flat `name`
 * or nested `function.name`) and Anthropic-style `tool_use` content parts.
 */
export const toolNamesByCallId = (items: readonly MemoryItem[]): Map<string, string> => {
  const names = new Map<string, string>();
  for (const item of items) {
    if (isFunctionCall(item)) {
      if (typeof item.name === 'string' && item.name.length > 0) names.set(item.call_id, item.name);
      continue;
    }
    if (!isMessage(item)) continue;
    if (Array.isArray(item.tool_calls)) {
      for (const call of item.tool_calls) {
        if (!call || typeof call.id !== 'string') continue;
        const name = toolCallName(call);
        if (name) names.set(call.id, name);
      }
    }
    if (Array.isArray(item.content)) {
      for (const part of item.content) {
        if (part && part.type === 'tool_use' && typeof part['id'] === 'string' && typeof part['name'] === 'string') {
          names.set(part['id'], part['name']);
        }
      }
    }
  }
  return names;
};

/** A tool call as the runtime runs it: its id, the tool's name ('' when unknown) and its JSON arguments. */
export interface ToolCallInfo {
  readonly callId: string;
  readonly name: string;
  readonly arguments: string;
}

/**
 * Calls in the order the model gave them: function_call items and tool_calls on assistant messages.
 * @example toolCallsOf([functionCall('c1', 'bash', { command: 'ls' })]) // [{ callId: 'c1', name: 'bash', arguments: '{"command":"ls"}' }]
 */
export const toolCallsOf = (items: readonly MemoryItem[]): ToolCallInfo[] => {
  const calls: ToolCallInfo[] = [];
  for (const item of items) {
    if (isFunctionCall(item)) calls.push({ callId: item.call_id, name: item.name, arguments: item.arguments });
    else if (isMessage(item) && Array.isArray(item.tool_calls)) {
      for (const call of item.tool_calls) calls.push({ callId: call.id, name: toolCallName(call) ?? '', arguments: toolCallArguments(call) });
    }
  }
  return calls;
};

let trackedItems = 0;

/** How many items unanswered-call trackers have been given in this process: a work count for tests. */
export const unansweredCallItemCount = (): number => trackedItems;

/**
 * The calls without an output, kept up to date item by item: `add` each item in order, `unanswered()` at any point
 * gives what {@link unansweredCalls} gives for the items added so far, in O(calls still open). An output answers
 * the nearest earlier unanswered call of its id.
 * @example const open = new UnansweredCallTracker(); for (const item of items) open.add(item); open.unanswered()
 */
export class UnansweredCallTracker {
  /** Per call id, its unanswered calls, oldest first (an output answers the newest). */
  readonly #open = new Map<string, ToolCallInfo[]>();
  /** Every unanswered call, in the order the calls were made (a Set keeps insertion order; answered ones leave it). */
  readonly #order = new Set<ToolCallInfo>();
  #added = 0;

  /** How many items were added. */
  get size(): number {
    return this.#added;
  }

  add(item: MemoryItem): void {
    this.#added += 1;
    trackedItems += 1;
    const answers = outputCallIdOf(item);
    if (answers !== undefined) {
      const answered = this.#open.get(answers)?.pop();
      if (answered) this.#order.delete(answered);
    }
    const described = toolCallsOf([item]);
    for (const id of callIdsOf(item)) if (!described.some((c) => c.callId === id)) described.push({ callId: id, name: '', arguments: '' });
    for (const call of described) {
      this.#order.add(call);
      const stack = this.#open.get(call.callId);
      if (stack) stack.push(call);
      else this.#open.set(call.callId, [call]);
    }
  }

  /** The calls of the items added so far that have no output, in call order. */
  unanswered(): ToolCallInfo[] {
    return [...this.#order];
  }
}

/**
 * Calls in `items` that have no output yet, with the tool name when known (Anthropic `tool_use` parts included).
 * An output answers the nearest earlier unanswered call of its id (a model may reuse one id every turn).
 * @example unansweredCalls(memory.getItems()).map((c) => c.callId)
 */
export const unansweredCalls = (items: readonly MemoryItem[]): ToolCallInfo[] => {
  const tracker = new UnansweredCallTracker();
  for (const item of items) tracker.add(item);
  return tracker.unanswered();
};
