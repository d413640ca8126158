// An Agents SDK `Session` backed by the event log, with a `callModelInputFilter` that projects and records each model call.
import { getHandoff, RequestUsage } from '@openai/agents';
import type {
  Agent,
  AgentInputItem,
  CallModelInputFilter,
  ModelInputData,
  OpenAIResponsesCompactionArgs,
  OpenAIResponsesCompactionResult,
  SessionHistoryRewriteArgs,
  SessionHistoryRewriteAwareSession,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from '@openai/agents';
import type { CompactPolicy } from '../../compact/index.js';
import { InvalidOptionsError, SessionHistoryError } from '../../base/errors.js';
import { type NewSessionEvent } from '../../events/index.js';
import { canonicalJson } from '../../base/index.js';
import type { MemoryItem } from '../../items/index.js';
import type { SessionEventLog } from '../../log/index.js';
import { compactionEventFor, visibleEntries } from '../../memory/index.js';
import { openSession, type AgentSession } from '../../session/index.js';
import { recordProjection, resolveProjection, type BridgeProjectionOptions, type ResolvedProjection } from '../shared/projection.js';
import { HISTORY_MESSAGES, checkMutations, checkTransaction, planMutations, planReplaceSuffix } from './history.js';
import { checkAgentInputItems, fromAgentInputItems, toAgentInputItems } from './items.js';
import { inputChecks } from '../shared/input.js';

/** Options of {@link openLedgerSession}. */
export interface LedgerSessionOptions extends BridgeProjectionOptions {
  /** The session id in the log (continued when it exists). Default: a fresh id. */
  readonly sessionId?: string;
  /** Makes session ids (default `randomUUID`). */
  readonly ids?: () => string;
  /** Run by `runCompaction`, the hook the runner calls after each completed turn. Absent: no compaction. */
  readonly compactPolicy?: CompactPolicy;
  /** Recorded in `session.started` of a new session. */
  readonly metadata?: Record<string, unknown>;
}

/** The `editor` of the `memory.edited` events `applyHistoryTransaction` and `applyHistoryMutations` record. */
export const HISTORY_TRANSACTION_EDITOR = 'openai-agents:applyHistoryTransaction';
export const HISTORY_MUTATIONS_EDITOR = 'openai-agents:applyHistoryMutations';

/** The policy description a `popItem` records in its `memory.compacted` event. */
export const POP_ITEM_POLICY = { name: 'openai-agents:popItem', settings: {} } as const;

const MAX_PENDING = 10_000;

/** How the runner's persisted copy of an item is matched to the one the filter recorded: the runner drops provider ids. */
const persistenceKey = (item: AgentInputItem): string => {
  const { id: _id, providerData: _data, ...rest } = item as Record<string, unknown>;
  return canonicalJson(rest);
};

type Json = Record<string, unknown>;
const jsonCopy = (value: unknown): Json => JSON.parse(JSON.stringify(value ?? {})) as Json;

/**
 * The tools the runner sends the model for this agent, as the Responses model serializes them: function tools
 * `{type:'function', name, description, parameters, strict}`, hosted tools by type and name with their provider
 * data, and each handoff as the function tool the model calls (`transfer_to_…`).
 */
export const toolsSentByAgent = (agent: Pick<Agent<any, any>, 'tools' | 'handoffs'>): Json[] => [
  // An agent without tools or handoffs (a partial object in a hand-written filter call) sends none.
  ...(Array.isArray(agent.tools) ? agent.tools : []).map((tool) => {
    const t = tool as unknown as Json;
    return t['type'] === 'function'
      ? jsonCopy({ type: 'function', name: t['name'], description: t['description'], parameters: t['parameters'], strict: t['strict'] })
      : jsonCopy({ type: t['type'], name: t['name'], providerData: t['providerData'] });
  }),
  ...(Array.isArray(agent.handoffs) ? agent.handoffs : []).map((h) => {
    const handoff = getHandoff(h as never);
    return jsonCopy({ type: 'function', name: handoff.toolName, description: handoff.toolDescription, parameters: handoff.inputJsonSchema, strict: handoff.strictJsonSchema });
  }),
];

/** Which event records an item the runner hands over. */
const eventKind = (item: MemoryItem): 'user.input' | 'model.output' | 'tool.result' => {
  if (item.type === 'message' && item['role'] !== 'assistant') return 'user.input';
  if (item.type === 'function_call_output' && typeof item['output'] === 'string' && item['agents_type'] === undefined) {
    // Only a plain result is a `tool.result` (which keeps call id, output and name): one with more keys keeps them in model.output.
    const keys = Object.keys(item).filter((k) => k !== 'type' && k !== 'call_id' && k !== 'output' && k !== 'name' && !(k === 'status' && item['status'] === 'completed'));
    if (keys.length === 0) return 'tool.result';
  }
  return 'model.output';
};

/**
 * An Agents SDK `Session` whose history is a session of the log: `addItems` appends events (user input,
 * model output, tool results), `getItems` is the fold of the log, `popItem` records a `memory.compacted`
 * that keeps the ids of every other item, `clearSession` records `memory.cleared`, and `runCompaction`
 * (the runner's hook after each turn) runs the compaction policy. `callModelInputFilter` projects the
 * session's memory with the projector and budget before each model call and records `context.projected`.
 * @example
 * const session = await openLedgerSession(log, { contextBudget: { maxTokens: 16_000 } });
 * await run(agent, 'hello', { session, callModelInputFilter: session.callModelInputFilter });
 */
export class LedgerSession implements SessionHistoryTransactionAwareSession, SessionHistoryRewriteAwareSession {
  #step: number;
  /** Items the input filter already recorded, which the runner will hand to `addItems` again. */
  #pending: string[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  /** The history transactions applied since the session was last cleared: operation id → digest of the transaction. */
  #operations: Map<string, string>;

  constructor(
    readonly session: AgentSession,
    readonly projection: ResolvedProjection,
    readonly compactPolicy: CompactPolicy | undefined,
    lastStep: number,
    operations: ReadonlyMap<string, string> = new Map(),
  ) {
    this.#step = lastStep;
    this.#operations = new Map(operations);
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async getSessionId(): Promise<string> {
    return this.session.id;
  }

  /** The items as the model would see them (a summary first, as a system message); with `limit`, the newest `limit`. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
      throw new InvalidOptionsError('getItems', [{ path: 'limit', message: `must be a non-negative integer, got ${limit}` }]);
    }
    await this.#queue;
    const items = this.session.memory.getItems();
    return toAgentInputItems(limit === undefined ? items : limit === 0 ? [] : items.slice(-limit));
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    checkAgentInputItems(inputChecks('openai-agents', 'LedgerSession.addItems'), items);
    await this.#serial(async () => {
      await this.#record(this.#notYetRecorded(items));
    });
  }

  /** The items the input filter has not recorded already (the runner hands them over again to persist them). */
  #notYetRecorded(items: readonly AgentInputItem[]): AgentInputItem[] {
    return items.filter((item) => {
      if (this.#pending[0] === persistenceKey(item)) {
        this.#pending.shift();
        return false;
      }
      return true;
    });
  }

  async #record(items: readonly AgentInputItem[], extra: readonly NewSessionEvent[] = []): Promise<void> {
    const events: NewSessionEvent[] = [];
    for (const item of fromAgentInputItems(items, { reasoningIdPrefix: `reasoning_${this.session.memory.headSeq() + 1}` })) {
      const kind = eventKind(item);
      const last = events.at(-1);
      if (kind === 'tool.result') {
        events.push({ type: 'tool.result', callId: item['call_id'] as string, output: item['output'] as string, ...(typeof item['name'] === 'string' ? { name: item['name'] } : {}) });
      } else if (last && last.type === kind) {
        (last as { items: MemoryItem[] }).items.push(item);
      } else {
        events.push({ type: kind, items: [item] });
      }
    }
    events.push(...extra);
    if (events.length > 0) await this.session.record(events);
  }

  /** Removes the newest item: a `memory.compacted` (policy `openai-agents:popItem`) keeping every other item's id. */
  async popItem(): Promise<AgentInputItem | undefined> {
    return this.#serial(async () => {
      const state = this.session.memory.state();
      const last = state.entries.at(-1);
      if (!last) return undefined;
      const remaining = state.entries.slice(0, -1).map((e) => e.item);
      const event = compactionEventFor(state, { items: remaining, summary: state.summary }, {}, { trigger: 'manual', policy: POP_ITEM_POLICY });
      await this.session.record([event]);
      this.#pending = [];
      return toAgentInputItems([last.item])[0];
    });
  }

  async clearSession(): Promise<void> {
    await this.#serial(async () => {
      await this.session.memory.clear();
      this.#pending = [];
      this.#operations = new Map();
    });
  }

  /**
   * The SDK's atomic, idempotent history change (the runner uses it to persist a turn an output guardrail blocked, and
   * the accepted turn that replaces it). `append_items`: the items are recorded as `addItems` records them, with a
   * `memory.edited` (kind `append_items`, no layout) in the same append that records the operation. `replace_suffix`:
   * memory, as `getItems()` gives it, must end with `expectedSuffix` (compared as JSON); one `memory.edited` (kind
   * `replace_suffix`) keeps the prefix and the replacement's leading items that did not change, by id, and writes the
   * rest inline. An operation id applied before with the same transaction is not applied again; with another
   * transaction, or on a suffix that does not match, nothing is recorded (`SessionHistoryError`, with the SDK's message).
   */
  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    const { operationId, transaction, digest } = checkTransaction(this.session.id, args);
    await this.#serial(async () => {
      const applied = this.#operations.get(operationId);
      if (applied !== undefined) {
        if (applied !== digest) throw new SessionHistoryError(this.session.id, 'operation-conflict', operationId, HISTORY_MESSAGES.conflict);
        return;
      }
      const record = { type: 'memory.edited', editor: HISTORY_TRANSACTION_EDITOR, kind: transaction.type, operationId, operationDigest: digest } as const;
      if (transaction.type === 'append_items') {
        await this.#record(this.#notYetRecorded(transaction.items), [{ ...record, droppedIds: [] }]);
      } else {
        const state = this.session.memory.state();
        const itemIds = new Set(state.entries.map((e) => e.id));
        const plan = planReplaceSuffix(this.session.id, operationId, visibleEntries(state), itemIds, transaction.expectedSuffix, transaction.replacement);
        await this.session.record([{ ...record, layout: plan.layout, droppedIds: plan.droppedIds }]);
        this.#pending = [];
      }
      this.#operations.set(operationId, digest);
    });
  }

  /**
   * The SDK's history rewrite (`replace_function_call`): the first function call with the mutation's `callId` becomes
   * the replacement and later ones with that id are removed, recorded as one `memory.edited` (kind
   * `replace_function_call`, the replacement naming the call it `replaces`). No matching call: nothing is recorded.
   */
  async applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void> {
    const mutations = checkMutations(this.session.id, args);
    if (mutations.length === 0) return;
    await this.#serial(async () => {
      const state = this.session.memory.state();
      const plan = planMutations(state.entries, new Set(state.entries.map((e) => e.id)), mutations);
      if (!plan) return;
      await this.session.record([{ type: 'memory.edited', editor: HISTORY_MUTATIONS_EDITOR, kind: 'replace_function_call', layout: plan.layout, droppedIds: plan.droppedIds }]);
    });
  }

  /**
   * The runner's compaction hook (after each completed turn): runs the compaction policy when it says so,
   * or always with `force`. Returns null when nothing was compacted (or no policy was given).
   */
  async runCompaction(args: OpenAIResponsesCompactionArgs = {}): Promise<OpenAIResponsesCompactionResult | null> {
    const policy = this.compactPolicy;
    if (!policy) return null;
    return this.#serial(async () => {
      const result = args.force ? await this.session.compact(policy) : await this.session.autoCompactIfNecessary(policy);
      return result ? { usage: new RequestUsage() } : null;
    });
  }

  /**
   * A `callModelInputFilter`: records the turn's new input items (so the log holds what the model is sent),
   * projects the session's memory with the projector and budget, records `context.projected` and
   * `model.requested` (the instructions, the agent's tools and handoffs as the model receives them, and the agent's
   * `modelSettings`; settings a `Runner` config adds are not visible to the filter), and returns the projection as
   * the model input.
   */
  readonly callModelInputFilter: CallModelInputFilter = ({ modelData, agent }) =>
    this.#serial(async (): Promise<ModelInputData> => {
      const input = modelData.input;
      checkAgentInputItems(inputChecks('openai-agents', 'LedgerSession.callModelInputFilter'), input);
      const recorded = toAgentInputItems(this.session.memory.getItems()).map(canonicalJson);
      const given = input.map(canonicalJson);
      let common = 0;
      while (common < recorded.length && common < given.length && recorded[common] === given[common]) common++;
      if (common < recorded.length) {
        // The runner's history is not the log's (items rewritten or removed outside this session): record it as a restore.
        await this.session.memory.restore({ items: fromAgentInputItems(input) });
      } else {
        await this.#record(input.slice(common));
      }
      this.#pending.push(...input.slice(common).map(persistenceKey));
      if (this.#pending.length > MAX_PENDING) this.#pending.splice(0, this.#pending.length - MAX_PENDING);
      const step = ++this.#step;
      const model = typeof agent.model === 'string' && agent.model.length > 0 ? agent.model : 'default';
      const projection = await recordProjection(this.session, this.projection, {
        step,
        model,
        ...(modelData.instructions !== undefined ? { systemPrompt: modelData.instructions } : {}),
        tools: toolsSentByAgent(agent),
        settings: jsonCopy(agent.modelSettings),
      });
      return { input: toAgentInputItems(projection.items), ...(modelData.instructions !== undefined ? { instructions: modelData.instructions } : {}) };
    });
}

/**
 * Opens (or continues) a session of the log as an Agents SDK `Session`.
 * @example
 * import { Agent, run } from '@openai/agents';
 * const session = await openLedgerSession(await openLevelLog('./.ledger'), { sessionId: 'chat-1', contextBudget: { maxItems: 40 } });
 * const result = await run(new Agent({ name: 'helper' }), 'hi', { session, callModelInputFilter: session.callModelInputFilter });
 */
export const openLedgerSession = async (log: SessionEventLog, options: LedgerSessionOptions = {}): Promise<LedgerSession> => {
  const projection = resolveProjection(options);
  const session = await openSession(log, {
    ...(options.sessionId !== undefined ? { id: options.sessionId } : {}),
    ...(options.ids ? { ids: options.ids } : {}),
    metadata: { ...options.metadata, bridge: 'openai-agents' },
  });
  let lastStep = 0;
  // The history operations applied since the last clear (a rewind forgets those after its seq).
  const operations = new Map<string, { digest: string; seq: number }>();
  for await (const event of log.read(session.id)) {
    if (event.type === 'context.projected' && event.step !== undefined) lastStep = Math.max(lastStep, event.step);
    else if (event.type === 'memory.edited' && event.operationId !== undefined && event.operationDigest !== undefined) operations.set(event.operationId, { digest: event.operationDigest, seq: event.seq });
    else if (event.type === 'memory.cleared') operations.clear();
    else if (event.type === 'session.rewound') for (const [id, op] of operations) if (op.seq > event.toSeq) operations.delete(id);
  }
  return new LedgerSession(session, projection, options.compactPolicy, lastStep, new Map([...operations].map(([id, op]) => [id, op.digest])));
};
