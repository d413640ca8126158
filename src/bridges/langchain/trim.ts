// A drop-in for LangChain's `trimMessages` (strategy 'last'), backed by the context projector: tool pairs kept whole, and a report.
import type { BaseMessage, MessageTypeOrClass } from '@langchain/core/messages';
import { DefaultContextProjector, type ContextProjector } from '../../context/index.js';
import { InvalidOptionsError } from '../../errors.js';
import type { ContextReport } from '../../events/index.js';
import { fromBaseMessages, toBaseMessages } from './messages.js';

/** Something with `getNumTokens` (a LangChain chat model or LLM). */
export interface TokenCountingModel {
  getNumTokens(content: BaseMessage['content']): Promise<number>;
}

/** The options of LangChain's `trimMessages` that this one takes (`strategy: 'last'` only, no partial messages). */
export interface LedgerTrimMessagesFields {
  readonly maxTokens: number;
  readonly tokenCounter: ((messages: BaseMessage[]) => number) | ((messages: BaseMessage[]) => Promise<number>) | TokenCountingModel;
  /** Only `'last'` (the default): keep the newest messages. */
  readonly strategy?: 'last';
  /** Drop kept messages before the first of these types (a system message kept by `includeSystem` stays). */
  readonly startOn?: MessageTypeOrClass | MessageTypeOrClass[];
  /** Ignore every message after the last of these types, before trimming. */
  readonly endOn?: MessageTypeOrClass | MessageTypeOrClass[];
  /** Keep a system message at index 0 (its tokens count against `maxTokens`). Default false. */
  readonly includeSystem?: boolean;
  /** Not supported (a message is kept whole or dropped): only `false`. */
  readonly allowPartial?: false;
  /** The projector that selects (default `new DefaultContextProjector()`). */
  readonly projector?: ContextProjector;
}

/** What {@link trimMessagesWithReport} returns: the messages to send and what was kept, dropped and why. */
export interface TrimmedMessages {
  readonly messages: BaseMessage[];
  readonly report: ContextReport;
}

const ALIASES: Readonly<Record<string, string>> = { user: 'human', assistant: 'ai' };

const matches = (message: BaseMessage, types: MessageTypeOrClass | MessageTypeOrClass[]): boolean =>
  (Array.isArray(types) ? types : [types]).some((type) =>
    typeof type === 'string' ? message.getType() === (ALIASES[type] ?? type) : typeof type === 'function' && message instanceof type,
  );

const counterOf = (tokenCounter: LedgerTrimMessagesFields['tokenCounter']): ((message: BaseMessage) => Promise<number>) => {
  if (typeof tokenCounter === 'function') return async (message) => tokenCounter([message]);
  if (tokenCounter && typeof tokenCounter.getNumTokens === 'function') return (message) => tokenCounter.getNumTokens(message.content);
  throw new InvalidOptionsError('trimMessages', [{ path: 'tokenCounter', message: 'must be a function of messages or a model with getNumTokens' }]);
};

/**
 * {@link trimMessages} that also returns the projector's report (fates per message, notes).
 * @example
 * const { messages, report } = await trimMessagesWithReport(history, { maxTokens: 4000, tokenCounter, includeSystem: true });
 * console.log(report.notes, report.droppedItemCount);
 */
export const trimMessagesWithReport = async (messages: readonly BaseMessage[], fields: LedgerTrimMessagesFields): Promise<TrimmedMessages> => {
  const { maxTokens } = fields;
  if (!Number.isInteger(maxTokens)) throw new InvalidOptionsError('trimMessages', [{ path: 'maxTokens', message: `must be an integer, got ${String(maxTokens)}` }]);
  if ((fields.strategy ?? 'last') !== 'last') throw new InvalidOptionsError('trimMessages', [{ path: '', message: `only strategy 'last' is supported, got ${JSON.stringify(fields.strategy)}` }]);
  if ((fields.allowPartial as boolean | undefined) === true) throw new InvalidOptionsError('trimMessages', [{ path: 'allowPartial', message: 'is not supported (messages are kept whole, tool calls with their results)' }]);
  const count = counterOf(fields.tokenCounter);
  let source = [...messages];
  if (fields.endOn !== undefined) {
    let last = -1;
    source.forEach((m, i) => {
      if (matches(m, fields.endOn!)) last = i;
    });
    source = source.slice(0, last + 1);
  }
  const pinned = fields.includeSystem === true && source[0]?.getType() === 'system' ? 1 : 0;
  const tokens = await Promise.all(source.map(count));
  // The newest messages whose tokens fit (after the pinned system message): the projector then keeps
  // tool calls with their results, which can only drop more.
  let budget = maxTokens - (pinned ? (tokens[0] ?? 0) : 0);
  let fit = 0;
  for (let i = source.length - 1; i >= pinned && budget >= (tokens[i] ?? 0); i--) {
    budget -= tokens[i] ?? 0;
    fit += 1;
  }
  const items = fromBaseMessages(source);
  const projector = fields.projector ?? new DefaultContextProjector();
  const projection = projector.project(items, { maxItems: pinned + fit, pinnedPrefixItems: pinned });
  let kept = projection.report.fates.filter((f) => f.fate !== 'dropped').map((f) => f.index);
  let fates = projection.report.fates;
  const notes = [...projection.report.notes];
  if (maxTokens <= 0 || (pinned === 1 && (tokens[0] ?? 0) > maxTokens)) {
    kept = [];
    fates = fates.map((f) => ({ index: f.index, fate: 'dropped' as const, rule: 'maxTokens' as const }));
  }
  if (fields.startOn !== undefined) {
    const first = kept.findIndex((index, position) => position >= pinned && matches(source[index]!, fields.startOn!));
    const cut = first === -1 ? kept.slice(pinned) : kept.slice(pinned, first);
    if (cut.length > 0) {
      const removed = new Set(cut);
      kept = kept.filter((index) => !removed.has(index));
      fates = fates.map((f) => (removed.has(f.index) ? { index: f.index, fate: 'dropped' as const, rule: 'tail' as const } : f));
      notes.push(`startOn applied: dropped ${cut.length} message(s) before the first ${JSON.stringify(fields.startOn)}`);
    }
  }
  notes.unshift(`maxTokens ${maxTokens} by tokenCounter: ${pinned + fit} newest message(s) fit`);
  const projectedByIndex = new Map<number, (typeof projection.items)[number]>();
  let position = 0;
  for (const f of projection.report.fates) if (f.fate !== 'dropped') projectedByIndex.set(f.index, projection.items[position++]!);
  const projectedItems = kept.map((index) => projectedByIndex.get(index)!);
  const keptTokens = kept.reduce((sum, index) => sum + (tokens[index] ?? 0), 0);
  const report: ContextReport = {
    ...projection.report,
    sourceItemCount: source.length,
    projectedItemCount: kept.length,
    droppedItemCount: source.length - kept.length,
    sourceTokens: tokens.reduce((a, b) => a + b, 0),
    projectedTokens: keptTokens,
    tokenLimitApplied: kept.length < source.length,
    notes,
    fates,
  };
  return { messages: toBaseMessages(projectedItems), report };
};

/**
 * LangChain's `trimMessages(messages, options)` for `strategy: 'last'`, backed by the context projector: the
 * newest messages that fit `maxTokens` (counted by your `tokenCounter`), a leading system message with
 * `includeSystem`, starting on `startOn`, and never an AI tool call without its `ToolMessage` results (or a
 * result without its call). Swap the import; use {@link trimMessagesWithReport} to see what was dropped and why.
 * @example
 * import { trimMessages } from 'context-ledger/langchain';
 * const trimmed = await trimMessages(history, { maxTokens: 4000, tokenCounter: (msgs) => msgs.length * 50, startOn: 'human', includeSystem: true });
 */
export const trimMessages = async (messages: readonly BaseMessage[], fields: LedgerTrimMessagesFields): Promise<BaseMessage[]> =>
  (await trimMessagesWithReport(messages, fields)).messages;
