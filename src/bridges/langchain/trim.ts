// A drop-in for LangChain's `trimMessages`: its selection ('first' and 'last', partial messages, startOn/endOn), then the pairing law, and a report.
import {
  AIMessage,
  AIMessageChunk,
  ChatMessage,
  ChatMessageChunk,
  defaultTextSplitter,
  FunctionMessage,
  FunctionMessageChunk,
  HumanMessage,
  HumanMessageChunk,
  isBaseMessageChunk,
  SystemMessage,
  SystemMessageChunk,
  ToolMessage,
  ToolMessageChunk,
  type BaseMessage,
  type MessageContent,
  type MessageTypeOrClass,
} from '@langchain/core/messages';
import { RunnableLambda, type Runnable } from '@langchain/core/runnables';
import { toolPairGroups, type ContextProjector } from '../../context/index.js';
import { InvalidOptionsError } from '../../base/errors.js';
import type { ContextReport, FateRule, ItemFate } from '../../events/index.js';
import { approxChars } from '../../items/index.js';
import { inputChecks } from '../shared/input.js';
import { checkBaseMessages, fromBaseMessages } from './messages.js';

/** Something with `getNumTokens` (a LangChain chat model or LLM). */
export interface TokenCountingModel {
  getNumTokens(content: BaseMessage['content']): Promise<number>;
}

/** What LangChain's `textSplitter` may be: a function of a text, or an object with `splitText` (a LangChain text splitter). */
export type TextSplitterLike = ((text: string) => string[]) | ((text: string) => Promise<string[]>) | { splitText(text: string): Promise<string[]> };

/** LangChain's `TrimMessagesFields`, with the same meaning (docs/bridges.md says where the result differs: tool pairs). */
export interface LedgerTrimMessagesFields {
  readonly maxTokens: number;
  /** Counts a list of messages (called on lists, as LangChain does), or a model whose `getNumTokens` counts one message's content. */
  readonly tokenCounter: ((messages: BaseMessage[]) => number) | ((messages: BaseMessage[]) => Promise<number>) | TokenCountingModel;
  /** `'last'` (default): keep the newest messages; `'first'`: keep the oldest. */
  readonly strategy?: 'first' | 'last';
  /** Split the message at the boundary (its content blocks, else its text with `textSplitter`) and keep the part that fits. Default false. */
  readonly allowPartial?: boolean;
  /** Only with `'last'`: drop kept messages before the first of these types (as LangChain: the system message too, when none is left). */
  readonly startOn?: MessageTypeOrClass | MessageTypeOrClass[];
  /** `'last'`: ignore every message after the last of these types, before trimming; `'first'`: drop kept messages after the last of them. */
  readonly endOn?: MessageTypeOrClass | MessageTypeOrClass[];
  /** Only with `'last'`: keep a system message at index 0 (its tokens count against `maxTokens`). Default false. */
  readonly includeSystem?: boolean;
  /** How a partial message's text is split (default LangChain's: on newlines, separators kept). */
  readonly textSplitter?: TextSplitterLike;
  /**
   * Kept for compatibility with the first version of this bridge: a projector selects instead of LangChain's rule (the newest
   * messages that fit, by `maxItems`). Only with strategy `'last'` and no `allowPartial`.
   */
  readonly projector?: ContextProjector;
}

/** What {@link trimMessagesWithReport} returns: the messages to send and what was kept, dropped and why. */
export interface TrimmedMessages {
  readonly messages: BaseMessage[];
  readonly report: ContextReport;
}

type Counter = (messages: BaseMessage[]) => Promise<number>;
type Splitter = (text: string) => Promise<string[]>;

/** A message of the trimming, with the index of the source message it is (a copy of). */
interface Slot {
  readonly index: number;
  readonly message: BaseMessage;
  readonly partial: boolean;
}

const optionsError = (path: string, message: string): InvalidOptionsError => new InvalidOptionsError('trimMessages', [{ path, message }]);

const counterOf = (tokenCounter: LedgerTrimMessagesFields['tokenCounter']): Counter => {
  if (typeof tokenCounter === 'function') return async (messages) => tokenCounter(messages);
  if (tokenCounter && typeof (tokenCounter as TokenCountingModel).getNumTokens === 'function') {
    const model = tokenCounter as TokenCountingModel;
    return async (messages) => (await Promise.all(messages.map((m) => model.getNumTokens(m.content)))).reduce((a, b) => a + b, 0);
  }
  throw optionsError('tokenCounter', 'must be a function of messages or a model with getNumTokens');
};

const splitterOf = (textSplitter: TextSplitterLike | undefined): Splitter => {
  if (textSplitter === undefined) return defaultTextSplitter;
  if (typeof textSplitter === 'function') return async (text) => textSplitter(text);
  if (textSplitter && typeof textSplitter.splitText === 'function') return (text) => textSplitter.splitText(text);
  throw optionsError('textSplitter', 'must be a function of a text or an object with splitText');
};

type Fields = Record<string, unknown>;
type MessageClass = new (fields: never) => BaseMessage;

/** LangChain's `_MSG_CHUNK_MAP`: the class of each message type, plain and chunk. */
const CLASSES: Readonly<Record<string, readonly [MessageClass, MessageClass]>> = {
  human: [HumanMessage, HumanMessageChunk],
  ai: [AIMessage, AIMessageChunk],
  system: [SystemMessage, SystemMessageChunk],
  developer: [SystemMessage, SystemMessageChunk],
  tool: [ToolMessage, ToolMessageChunk],
  function: [FunctionMessage, FunctionMessageChunk],
  generic: [ChatMessage, ChatMessageChunk],
};

/**
 * A copy of `message` as LangChain's `_switchTypeToMessage` makes one (every own field but `type` and `lc_*`; an AI chunk's
 * `tool_call_chunks` rebuilt from its `tool_calls`; a developer message marked `__openai_role__`), chunks as chunks, with
 * `content` when given. A type LangChain has no class for (`remove`) is copied by its own constructor.
 */
const copyMessage = (message: BaseMessage, content?: MessageContent): BaseMessage => {
  let fields: Fields = Object.fromEntries(Object.entries(message).filter(([key]) => key !== 'type' && !key.startsWith('lc_')));
  if (content !== undefined) fields = { ...fields, content };
  const type = message.getType();
  const chunk = isBaseMessageChunk(message);
  const classes = CLASSES[type];
  if (!classes) return new (message.constructor as new (fields: Fields) => BaseMessage)(fields);
  if (type === 'developer') fields = { ...fields, additional_kwargs: { ...(fields['additional_kwargs'] as Fields | undefined), __openai_role__: 'developer' } };
  if (type === 'ai' && chunk && 'tool_calls' in fields) {
    const calls = (fields['tool_calls'] as { args?: unknown }[] | undefined) ?? undefined;
    fields = { ...fields, tool_call_chunks: calls?.map((call) => ({ ...call, type: 'tool_call_chunk', index: undefined, args: JSON.stringify(call.args) })) };
  }
  const Class = classes[chunk ? 1 : 0] as unknown as new (fields: Fields) => BaseMessage;
  return new Class(fields);
};

/** LangChain's `_isMessageType`: a string is a message type (`getType()`), a class stands for its instances' type. */
const typesOf = (types: MessageTypeOrClass | MessageTypeOrClass[]): Set<string> =>
  new Set(
    (Array.isArray(types) ? types : [types]).map((type) => {
      if (typeof type === 'string') return type;
      const instance: unknown = new (type as unknown as new (fields: object) => unknown)({});
      if (typeof (instance as { getType?: unknown }).getType !== 'function') throw optionsError('startOn/endOn', 'a class that is not a message class was given');
      return (instance as BaseMessage).getType();
    }),
  );

/** LangChain's `_firstMaxTokens` over slots: the longest prefix whose count fits, then maybe a partial message, then `endOn`. */
const firstMaxTokens = async (
  slots: readonly Slot[],
  options: { maxTokens: number; count: Counter; split: Splitter; partial: 'first' | 'last' | undefined; endOn: Set<string> | undefined; onCut?: (slot: Slot) => void },
): Promise<Slot[]> => {
  const { maxTokens, count, split, partial, endOn, onCut } = options;
  let kept: Slot[] = [...slots];
  const messagesOf = (list: readonly Slot[]): BaseMessage[] => list.map((s) => s.message);
  let idx = 0;
  for (let i = 0; i < kept.length; i += 1) {
    const remaining = i > 0 ? kept.slice(0, -i) : kept;
    if ((await count(messagesOf(remaining))) <= maxTokens) {
      idx = kept.length - i;
      break;
    }
  }
  if (idx < kept.length && partial) {
    let includedPartial = false;
    const excluded = kept[idx]!;
    const content = excluded.message.content;
    if (Array.isArray(content)) {
      const reversed = partial === 'last' ? [...content].reverse() : content;
      for (let i = 1; i <= content.length; i += 1) {
        const partialContent = (partial === 'first' ? reversed.slice(0, i) : reversed.slice(-i)) as MessageContent;
        const updated: Slot = { index: excluded.index, message: copyMessage(excluded.message, partialContent), partial: true };
        const sliced = [...kept.slice(0, idx), updated];
        if ((await count(messagesOf(sliced))) <= maxTokens) {
          kept = sliced;
          idx += 1;
          includedPartial = true;
        } else break;
      }
    }
    if (!includedPartial) {
      let text: string | undefined;
      if (Array.isArray(content) && content.some((block) => typeof block === 'string' || block.type === 'text')) {
        const block = content.find((b) => typeof b === 'object' && b.type === 'text' && typeof b['text'] === 'string' && b['text'] !== '') as { text: string } | undefined;
        text = block?.text;
      } else if (typeof content === 'string') text = content;
      if (text) {
        const splits = await split(text);
        if (partial === 'last') splits.reverse();
        for (let n = 0; n < splits.length - 1; n += 1) {
          splits.pop();
          const candidate = copyMessage(excluded.message, splits.join(''));
          if ((await count([...messagesOf(kept.slice(0, idx)), candidate])) <= maxTokens) {
            const message = partial === 'last' ? copyMessage(excluded.message, [...splits].reverse().join('')) : candidate;
            kept = [...kept.slice(0, idx), { index: excluded.index, message, partial: true }];
            idx += 1;
            break;
          }
        }
      }
    }
  }
  if (endOn) {
    while (idx > 0 && !endOn.has(kept[idx - 1]!.message.getType())) {
      idx -= 1;
      onCut?.(kept[idx]!);
    }
  }
  return kept.slice(0, idx);
};

/** Why a selection left a message out, when not for `maxTokens`: `'startOn'` / `'endOn'`, or the projector's rule. */
type Cuts = Map<number, 'startOn' | 'endOn' | FateRule>;

/**
 * LangChain's selection: `'first'` as `_firstMaxTokens`; `'last'` as `_lastMaxTokens` (endOn first, the system message
 * swapped to the front). `cuts` gets the messages left out by startOn / endOn.
 */
const selectLangChain = async (source: readonly BaseMessage[], fields: LedgerTrimMessagesFields, count: Counter, split: Splitter, cuts: Cuts): Promise<Slot[]> => {
  // As LangChain: 'first' gives the kept messages themselves, 'last' copies (each of its own class); a partial message is
  // always a new one (LangChain changes the input's message under 'first' with a partial text: this never does).
  const first = (fields.strategy ?? 'last') === 'first';
  const slots: Slot[] = source.map((message, index) => ({ index, message: first ? message : copyMessage(message), partial: false }));
  const endOn = fields.endOn !== undefined ? typesOf(fields.endOn) : undefined;
  const startOn = fields.startOn !== undefined ? typesOf(fields.startOn) : undefined;
  if (first) {
    return firstMaxTokens(slots, { maxTokens: fields.maxTokens, count, split, partial: fields.allowPartial === true ? 'first' : undefined, endOn, onCut: (slot) => cuts.set(slot.index, 'endOn') });
  }
  let list = slots;
  if (endOn) {
    while (list.length > 0 && !endOn.has(list[list.length - 1]!.message.getType())) {
      cuts.set(list[list.length - 1]!.index, 'endOn');
      list = list.slice(0, -1);
    }
  }
  const swappedSystem = fields.includeSystem === true && list[0]?.message.getType() === 'system';
  const reversed = swappedSystem ? [list[0]!, ...list.slice(1).reverse()] : [...list].reverse();
  const kept = await firstMaxTokens(reversed, {
    maxTokens: fields.maxTokens,
    count,
    split,
    partial: fields.allowPartial === true ? 'last' : undefined,
    endOn: startOn,
    onCut: (slot) => cuts.set(slot.index, 'startOn'),
  });
  return swappedSystem && kept.length > 0 ? [kept[0]!, ...kept.slice(1).reverse()] : kept.reverse();
};

/**
 * The first version's selection, through a projector (`projector` given): `endOn` cuts the source, then the newest messages
 * whose counts (one message at a time) fit are kept by `maxItems` (pairs whole), then `startOn` (a kept system message stays).
 */
const selectByProjector = async (source: readonly BaseMessage[], fields: LedgerTrimMessagesFields, projector: ContextProjector, count: Counter, cuts: Cuts): Promise<Slot[]> => {
  let list = [...source];
  if (fields.endOn !== undefined) {
    const endOn = typesOf(fields.endOn);
    while (list.length > 0 && !endOn.has(list[list.length - 1]!.getType())) {
      cuts.set(list.length - 1, 'endOn');
      list = list.slice(0, -1);
    }
  }
  const pinned = fields.includeSystem === true && list[0]?.getType() === 'system' ? 1 : 0;
  const tokens = await Promise.all(list.map((m) => count([m])));
  if (fields.maxTokens <= 0 || (pinned === 1 && (tokens[0] ?? 0) > fields.maxTokens)) return [];
  let budget = fields.maxTokens - (pinned ? (tokens[0] ?? 0) : 0);
  let fit = 0;
  for (let i = list.length - 1; i >= pinned && budget >= (tokens[i] ?? 0); i--) {
    budget -= tokens[i] ?? 0;
    fit += 1;
  }
  const projection = projector.project(fromBaseMessages(list), { maxItems: pinned + fit, pinnedPrefixItems: pinned });
  for (const f of projection.report.fates) if (f.fate === 'dropped' && f.rule !== 'maxItems') cuts.set(f.index, f.rule);
  let kept = projection.report.fates.filter((f) => f.fate !== 'dropped').map((f) => f.index);
  if (fields.startOn !== undefined) {
    const startOn = typesOf(fields.startOn);
    const first = kept.findIndex((index, position) => position >= pinned && startOn.has(list[index]!.getType()));
    for (const index of first === -1 ? kept.slice(pinned) : kept.slice(pinned, first)) cuts.set(index, 'startOn');
    kept = [...kept.slice(0, pinned), ...(first === -1 ? [] : kept.slice(first))];
  }
  return kept.map((index) => ({ index, message: copyMessage(list[index]!), partial: false }));
};

/**
 * {@link trimMessages} that also returns a report: one fate per source message (`kept`; `trimmed` for a partial message;
 * `dropped` by `maxTokens`, by `tail` for startOn/endOn, by `pairing` for a tool call or result whose partner was trimmed
 * away) and notes.
 * @example
 * const { messages, report } = await trimMessagesWithReport(history, { maxTokens: 4000, tokenCounter, includeSystem: true });
 * console.log(report.notes, report.droppedItemCount);
 */
export const trimMessagesWithReport = async (messages: readonly BaseMessage[], fields: LedgerTrimMessagesFields): Promise<TrimmedMessages> => {
  const source = checkBaseMessages(inputChecks('langchain', 'trimMessages'), messages);
  if (fields === null || typeof fields !== 'object') throw optionsError('', 'options are required when messages are given');
  const { maxTokens } = fields;
  const strategy = fields.strategy ?? 'last';
  if (!Number.isInteger(maxTokens)) throw optionsError('maxTokens', `must be an integer, got ${String(maxTokens)}`);
  if (strategy !== 'first' && strategy !== 'last') throw optionsError('strategy', `must be 'first' or 'last', got ${JSON.stringify(strategy)}`);
  if (strategy === 'first' && fields.startOn !== undefined) throw optionsError('startOn', "is only for strategy 'last' (as in LangChain)");
  if (strategy === 'first' && fields.includeSystem === true) throw optionsError('includeSystem', "is only for strategy 'last' (as in LangChain)");
  if (fields.projector !== undefined && (strategy !== 'last' || fields.allowPartial === true)) {
    throw optionsError('projector', "selects only under strategy 'last' without allowPartial");
  }
  const count = counterOf(fields.tokenCounter);
  const split = splitterOf(fields.textSplitter);
  const cuts: Cuts = new Map();
  const selected = fields.projector ? await selectByProjector(source, fields, fields.projector, count, cuts) : await selectLangChain(source, fields, count, split, cuts);

  // The pairing law: a tool call and its results are kept together or dropped together (a partial message counts as kept).
  const items = fromBaseMessages(source);
  const groups = toolPairGroups(items);
  const keptIndices = new Set(selected.map((s) => s.index));
  const unpaired = new Set<number>();
  for (const index of keptIndices) {
    const members = groups.membersOf(index);
    if (members.some((m) => !keptIndices.has(m))) for (const m of members) if (keptIndices.has(m)) unpaired.add(m);
  }
  let kept = selected.filter((s) => !unpaired.has(s.index));
  // startOn / endOn hold after the pairing law too (it can only have removed messages).
  const boundary = new Set<number>();
  if (unpaired.size > 0 && fields.endOn !== undefined && strategy === 'first') {
    const endOn = typesOf(fields.endOn);
    while (kept.length > 0 && !endOn.has(kept[kept.length - 1]!.message.getType())) boundary.add(kept.pop()!.index);
  }
  if (unpaired.size > 0 && fields.startOn !== undefined) {
    const startOn = typesOf(fields.startOn);
    const pinned = fields.includeSystem === true && kept[0]?.index === 0 && kept[0].message.getType() === 'system' && !startOn.has('system') ? 1 : 0;
    const first = kept.findIndex((s, p) => p >= pinned && startOn.has(s.message.getType()));
    const cut = first === -1 ? kept : kept.slice(pinned, first);
    for (const s of cut) boundary.add(s.index);
    kept = kept.filter((s) => !boundary.has(s.index));
  }

  const byIndex = new Map(kept.map((s) => [s.index, s]));
  const fates: ItemFate[] = source.map((_, index) => {
    const slot = byIndex.get(index);
    if (slot) return { index, fate: slot.partial ? 'trimmed' : 'kept', rule: slot.partial ? 'maxTokens' : index === 0 && fields.includeSystem === true && slot.message.getType() === 'system' ? 'pinned' : 'tail' };
    if (unpaired.has(index)) return { index, fate: 'dropped', rule: 'pairing' };
    if (boundary.has(index)) return { index, fate: 'dropped', rule: 'tail' };
    const cut = cuts.get(index);
    return { index, fate: 'dropped', rule: cut === undefined ? 'maxTokens' : cut === 'startOn' || cut === 'endOn' ? 'tail' : cut };
  });
  const out = kept.map((s) => s.message);
  const notes = [`maxTokens ${maxTokens} by tokenCounter (strategy '${strategy}'): ${selected.length} of ${source.length} message(s) selected`];
  const partial = kept.filter((s) => s.partial).length;
  if (partial > 0) notes.push(`allowPartial: ${partial} message(s) cut to the part that fits`);
  for (const which of ['endOn', 'startOn'] as const) {
    const n = [...cuts.values()].filter((c) => c === which).length;
    if (n > 0) notes.push(`${which} applied: dropped ${n} message(s)`);
  }
  if (unpaired.size > 0) notes.push(`pairing: dropped ${unpaired.size} message(s) whose tool call or result did not fit`);
  if (boundary.size > 0) notes.push(`startOn/endOn applied again after pairing: dropped ${boundary.size} message(s)`);
  const sourceTokens = source.length > 0 ? await count([...source]) : 0;
  const projectedTokens = out.length > 0 ? await count(out) : 0;
  const keptItems = kept.length > 0 ? fromBaseMessages(out) : [];
  const report: ContextReport = {
    sourceItemCount: source.length,
    projectedItemCount: out.length,
    droppedItemCount: source.length - out.length,
    sourceApproxChars: approxChars(items),
    projectedApproxChars: approxChars(keptItems),
    itemLimitApplied: false,
    characterLimitApplied: false,
    sourceTokens,
    projectedTokens,
    tokenLimitApplied: out.length < source.length || partial > 0,
    notes,
    fates,
  };
  return { messages: out, report };
};

/**
 * LangChain's `trimMessages`, with the pairing law: an AI message's tool calls are never sent without their `ToolMessage`
 * results, nor a result without its call (where LangChain would split them, both are dropped: docs/bridges.md). Same
 * options and the same two forms: `trimMessages(messages, options)` gives the trimmed messages (each of its own class,
 * chunks as chunks; the input is never changed), `trimMessages(options)` a Runnable to `.invoke`, `.batch` or `.pipe`.
 * Use {@link trimMessagesWithReport} to see what was dropped and why.
 * @example
 * import { trimMessages } from 'context-ledger/langchain';
 * const trimmed = await trimMessages(history, { maxTokens: 4000, tokenCounter: (msgs) => msgs.length * 50, startOn: 'human', includeSystem: true });
 * const chain = trimMessages({ maxTokens: 4000, tokenCounter }).pipe(model);
 */
export function trimMessages(options: LedgerTrimMessagesFields): Runnable<BaseMessage[], BaseMessage[]>;
export function trimMessages(messages: readonly BaseMessage[], options: LedgerTrimMessagesFields): Promise<BaseMessage[]>;
export function trimMessages(
  messagesOrOptions: readonly BaseMessage[] | LedgerTrimMessagesFields,
  options?: LedgerTrimMessagesFields,
): Promise<BaseMessage[]> | Runnable<BaseMessage[], BaseMessage[]> {
  if (Array.isArray(messagesOrOptions)) {
    return trimMessagesWithReport(messagesOrOptions as readonly BaseMessage[], options as LedgerTrimMessagesFields).then((r) => r.messages);
  }
  if (messagesOrOptions === null || typeof messagesOrOptions !== 'object') {
    throw optionsError('', 'trimMessages takes (messages, options) or (options)');
  }
  const trimmerOptions = messagesOrOptions as LedgerTrimMessagesFields;
  counterOf(trimmerOptions.tokenCounter);
  return RunnableLambda.from(async (input: BaseMessage[]) => (await trimMessagesWithReport(input, trimmerOptions)).messages).withConfig({ runName: 'trim_messages' });
}
