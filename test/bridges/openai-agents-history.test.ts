// The Agents SDK's own MemorySession cases for the optional history capabilities (applyHistoryTransaction,
// applyHistoryMutations) and the type guards, ported, run against the SDK's MemorySession and against LedgerSession.
// Sources (openai/openai-agents-js at tag v0.14.3, commit 7c4ab68e55c477f6f2997d6fc7a811f3d92de89b, the installed
// @openai/agents 0.14.3): packages/agents-core/test/memorySession.test.ts (every case but the two logging ones, whose
// logger LedgerSession does not have), packages/agents-core/test/historyMutations.test.ts, packages/agents-core/test/session.test.ts.
// The bodies are the SDK's with `new MemorySession(...)` made `await makeSession(...)`; where LedgerSession differs by
// design (binary data: the log holds JSON), the case is written for each (docs/bridges.md).
import {
  applySessionHistoryMutations,
  isOpenAIResponsesCompactionAwareSession,
  isSessionHistoryRewriteAwareSession,
  isSessionHistoryTransactionAwareSession,
  MemorySession,
  type AgentInputItem,
  type SessionHistoryMutation,
  type SessionHistoryTransactionArgs,
} from '@openai/agents';
import { describe, expect, it, test } from 'vitest';
import { openLedgerSession, type LedgerSession } from '../../src/bridges/openai-agents/index.js';
import { isSessionHistoryError, openMemoryLog, type SessionEvent } from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

const createUserMessage = (text: string): AgentInputItem => ({
  role: 'user',
  content: [
    {
      type: 'input_text',
      text,
    },
  ],
});

interface SessionOptions {
  readonly sessionId?: string;
  readonly initialItems?: AgentInputItem[];
}
type HistorySession = MemorySession | LedgerSession;

/** LedgerSessions made by the cases, to check the laws of what they recorded after each case. */
const ledgers: { session: LedgerSession; log: Awaited<ReturnType<typeof openMemoryLog>> }[] = [];

const makeMemorySession = async (options: SessionOptions = {}): Promise<HistorySession> => new MemorySession(options);
const makeLedgerSession = async (options: SessionOptions = {}): Promise<HistorySession> => {
  const log = await openMemoryLog();
  const session = await openLedgerSession(log, { ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}) });
  if (options.initialItems) await session.addItems(options.initialItems);
  ledgers.push({ session, log });
  return session;
};

const readAll = async (log: { read(id: string): AsyncIterable<SessionEvent> }, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

/** The message each implementation gives: the SDK's text; LedgerSession names the session first (the error's `sessionId`). */
const sdkMessage = (_sessionId: string, text: string): string => text;
const ledgerMessage = (sessionId: string, text: string): string => `session ${JSON.stringify(sessionId)}: ${text}`;

// The history capabilities came during 0.14 (these cases are 0.14.3's); the SDK matrix runs this file from 0.14.0, whose
// MemorySession and guards do not have them: the SDK's side is then left out, LedgerSession's (ours) still runs.
const sdkHasHistory =
  typeof (MemorySession.prototype as { applyHistoryTransaction?: unknown }).applyHistoryTransaction === 'function' &&
  typeof isSessionHistoryTransactionAwareSession === 'function';

describe.each([
  ...(sdkHasHistory ? [['MemorySession (the SDK)', makeMemorySession, sdkMessage] as const] : []),
  ['LedgerSession', makeLedgerSession, ledgerMessage],
] as const)('%s: the SDK\'s MemorySession cases', (_name, makeSession, messageOf) => {
  test('stores and retrieves items in memory', async () => {
    const initialItems = [createUserMessage('hello')];
    const session = await makeSession({
      sessionId: 'session-1',
      initialItems,
    });

    expect(await session.getSessionId()).toBe('session-1');
    expect(await session.getItems()).toEqual(initialItems);

    const newItems = [createUserMessage('one'), createUserMessage('two')];
    await session.addItems(newItems);
    expect(await session.getItems()).toEqual([...initialItems, ...newItems]);

    expect(await session.getItems(2)).toEqual(newItems);

    expect(await session.popItem()).toEqual(newItems[1]);
    expect(await session.getItems()).toEqual([...initialItems, newItems[0]]);

    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(await session.getItems(3)).toEqual([]);
    expect(await session.popItem()).toBeUndefined();
  });

  test('returns clones so external mutations do not persist', async () => {
    const initial = createUserMessage('start');
    const session = await makeSession({
      sessionId: 'session-2',
      initialItems: [initial],
    });

    const items = await session.getItems();
    expect(items[0]).not.toBe(initial);
    (items[0] as any).content = 'mutated';
    expect(await session.getItems()).toEqual([createUserMessage('start')]);

    const next = createUserMessage('next');
    await session.addItems([next]);
    (next as any).content = 'mutated';
    expect(await session.getItems()).toEqual([
      createUserMessage('start'),
      createUserMessage('next'),
    ]);

    const popped = await session.popItem();
    expect(popped).toEqual(createUserMessage('next'));
    if (popped) {
      (popped as any).content = 'mutated';
    }
    expect(await session.getItems()).toEqual([createUserMessage('start')]);
  });

  test('applies history mutations atomically', async () => {
    const session = await makeSession({
      sessionId: 'session-3',
      initialItems: [
        createUserMessage('start'),
        {
          type: 'function_call',
          id: 'call-old-1',
          callId: 'call-1',
          name: 'lookup',
          status: 'completed',
          arguments: '{"ok":false}',
        },
        {
          type: 'function_call',
          id: 'call-old-2',
          callId: 'call-1',
          name: 'lookup',
          status: 'completed',
          arguments: '{"duplicate":true}',
        },
      ],
    });
    const replacement = {
      type: 'function_call',
      id: 'call-new',
      callId: 'call-1',
      name: 'lookup',
      status: 'completed',
      arguments: '{"ok":true}',
    } satisfies AgentInputItem;

    await session.applyHistoryMutations({
      mutations: [
        {
          type: 'replace_function_call',
          callId: 'call-1',
          replacement,
        },
      ],
    });

    expect(await session.getItems()).toEqual([
      createUserMessage('start'),
      replacement,
    ]);
  });

  test('applies append transactions idempotently', async () => {
    const session = await makeSession({
      sessionId: 'session-transaction-append',
      initialItems: [createUserMessage('start')],
    });
    const appended = createUserMessage('committed');
    const args = {
      operationId: 'operation-append-1',
      transaction: {
        type: 'append_items' as const,
        items: [appended],
      },
    };

    await session.applyHistoryTransaction(args);
    (appended as any).content = 'mutated';
    await session.addItems([createUserMessage('later')]);
    await session.applyHistoryTransaction({
      operationId: args.operationId,
      transaction: {
        type: 'append_items',
        items: [createUserMessage('committed')],
      },
    });

    expect(await session.getItems()).toEqual([
      createUserMessage('start'),
      createUserMessage('committed'),
      createUserMessage('later'),
    ]);
  });

  test('replaces an exact history suffix idempotently', async () => {
    const prefix = createUserMessage('start');
    const expected = createUserMessage('blocked');
    const replacement = createUserMessage('accepted');
    const session = await makeSession({
      sessionId: 'session-transaction-replace',
      initialItems: [prefix, expected],
    });
    const transaction = {
      operationId: 'operation-replace-1',
      transaction: {
        type: 'replace_suffix' as const,
        expectedSuffix: [expected],
        replacement: [replacement],
      },
    };

    await session.applyHistoryTransaction(transaction);
    await session.addItems([createUserMessage('later')]);
    await session.applyHistoryTransaction(transaction);

    expect(await session.getItems()).toEqual([
      prefix,
      replacement,
      createUserMessage('later'),
    ]);
  });

  test('rejects a suffix mismatch without recording the operation', async () => {
    const start = createUserMessage('start');
    const session = await makeSession({
      sessionId: 'session-transaction-precondition',
      initialItems: [start],
    });

    await expect(
      session.applyHistoryTransaction({
        operationId: 'operation-replace-after-conflict',
        transaction: {
          type: 'replace_suffix',
          expectedSuffix: [createUserMessage('different')],
          replacement: [createUserMessage('accepted')],
        },
      }),
    ).rejects.toThrow('suffix no longer matches');
    expect(await session.getItems()).toEqual([start]);

    await session.applyHistoryTransaction({
      operationId: 'operation-replace-after-conflict',
      transaction: {
        type: 'replace_suffix',
        expectedSuffix: [start],
        replacement: [createUserMessage('accepted')],
      },
    });
    expect(await session.getItems()).toEqual([createUserMessage('accepted')]);
  });

  test('rejects operation ID reuse with different content', async () => {
    const session = await makeSession({
      sessionId: 'session-transaction-operation-conflict',
    });
    await session.applyHistoryTransaction({
      operationId: 'operation-conflict',
      transaction: {
        type: 'append_items',
        items: [createUserMessage('first')],
      },
    });

    await expect(
      session.applyHistoryTransaction({
        operationId: 'operation-conflict',
        transaction: {
          type: 'append_items',
          items: [createUserMessage('second')],
        },
      }),
    ).rejects.toThrow('already applied with a different transaction');
    expect(await session.getItems()).toEqual([createUserMessage('first')]);
  });

  test('records an empty append transaction', async () => {
    const session = await makeSession({
      sessionId: 'session-transaction-empty-append',
    });
    await session.applyHistoryTransaction({
      operationId: 'operation-empty',
      transaction: { type: 'append_items', items: [] },
    });

    await expect(
      session.applyHistoryTransaction({
        operationId: 'operation-empty',
        transaction: {
          type: 'append_items',
          items: [createUserMessage('unexpected')],
        },
      }),
    ).rejects.toThrow('already applied with a different transaction');
    expect(await session.getItems()).toEqual([]);
  });

  test('resets transaction identities when the session is cleared', async () => {
    const session = await makeSession({
      sessionId: 'session-transaction-reset',
    });
    const transaction = {
      operationId: 'operation-after-reset',
      transaction: {
        type: 'append_items' as const,
        items: [createUserMessage('committed')],
      },
    };

    await session.applyHistoryTransaction(transaction);
    await session.clearSession();
    await session.applyHistoryTransaction(transaction);

    expect(await session.getItems()).toEqual([createUserMessage('committed')]);
  });

  test('rejects invalid transaction input before mutation', async () => {
    const start = createUserMessage('start');
    const session = await makeSession({
      sessionId: 'session-transaction-invalid',
      initialItems: [start],
    });

    await expect(
      session.applyHistoryTransaction({
        operationId: '   ',
        transaction: { type: 'append_items', items: [] },
      }),
    ).rejects.toThrow('operationId must be a non-empty string');
    await expect(
      session.applyHistoryTransaction({
        operationId: 'operation-unknown',
        transaction: { type: 'unknown' } as any,
      }),
    ).rejects.toThrow('Unsupported session history transaction type');
    await expect(
      session.applyHistoryTransaction({
        operationId: 'operation-missing-transaction',
        transaction: null as any,
      }),
    ).rejects.toThrow('transaction must be an object');
    await expect(
      session.applyHistoryTransaction({
        operationId: 'operation-invalid-item',
        transaction: { type: 'append_items', items: [42] } as any,
      }),
    ).rejects.toThrow('items contain invalid or unsupported data');
    expect(await session.getItems()).toEqual([start]);
  });

  test('rejects unsupported transaction metadata before mutation', async () => {
    const start = createUserMessage('start');
    const session = await makeSession({
      sessionId: 'session-transaction-unsupported',
      initialItems: [start],
    });
    const withDate = createUserMessage('unsupported');
    withDate.providerData = { timestamp: new Date(0) };
    const withCycle = createUserMessage('cyclic');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    withCycle.providerData = cycle;
    const withBigInt = createUserMessage('bigint');
    withBigInt.providerData = { value: 42n };
    const sparseItems = new Array<AgentInputItem>(1);

    const unsupportedCases: Array<[string, AgentInputItem[]]> = [
      ['operation-date', [withDate]],
      ['operation-cycle', [withCycle]],
      ['operation-bigint', [withBigInt]],
      ['operation-sparse', sparseItems],
    ];
    for (const [operationId, items] of unsupportedCases) {
      await expect(
        session.applyHistoryTransaction({
          operationId,
          transaction: { type: 'append_items', items },
        }),
      ).rejects.toThrow('items contain invalid or unsupported data');
    }

    expect(await session.getItems()).toEqual([start]);
  });

  test('rejects non-enumerable metadata before mutation', async () => {
    const start = createUserMessage('start');
    const session = await makeSession({
      sessionId: 'session-transaction-non-enumerable',
      initialItems: [start],
    });
    const item = createUserMessage('unsupported');
    Object.defineProperty(item, 'providerData', {
      enumerable: false,
      value: { hidden: true },
    });

    await expect(
      session.applyHistoryTransaction({
        operationId: 'operation-non-enumerable',
        transaction: { type: 'append_items', items: [item] },
      }),
    ).rejects.toThrow('items contain invalid or unsupported data');
    expect(await session.getItems()).toEqual([start]);

    const retryItem = createUserMessage('retry');
    await session.applyHistoryTransaction({
      operationId: 'operation-non-enumerable',
      transaction: { type: 'append_items', items: [retryItem] },
    });
    expect(await session.getItems()).toEqual([start, retryItem]);
  });

  test('rejects unexpected transaction fields before mutation', async () => {
    const start = createUserMessage('start');
    const session = await makeSession({
      sessionId: 'session-transaction-unexpected-fields',
      initialItems: [start],
    });

    await expect(
      session.applyHistoryTransaction({
        operationId: 'operation-unexpected-append-field',
        transaction: {
          type: 'append_items',
          items: [createUserMessage('unsupported')],
          metadata: { attempt: 1 },
        } as any,
      }),
    ).rejects.toThrow('append transaction fields are invalid');
    await expect(
      session.applyHistoryTransaction({
        operationId: 'operation-unexpected-suffix-field',
        transaction: {
          type: 'replace_suffix',
          expectedSuffix: [start],
          replacement: [createUserMessage('unsupported')],
          metadata: { attempt: 1 },
        } as any,
      }),
    ).rejects.toThrow('suffix transaction fields are invalid');
    expect(await session.getItems()).toEqual([start]);

    const retryItem = createUserMessage('retry');
    await session.applyHistoryTransaction({
      operationId: 'operation-unexpected-append-field',
      transaction: { type: 'append_items', items: [retryItem] },
    });
    expect(await session.getItems()).toEqual([start, retryItem]);
  });

  test('does not expose transaction content in snapshot errors', async () => {
    const session = await makeSession({
      sessionId: 'session-transaction-error-redaction',
    });
    const item = createUserMessage('unsupported');
    item.providerData = { secret: Symbol('api-key-secret') };

    let error: unknown;
    try {
      await session.applyHistoryTransaction({
        operationId: 'operation-sensitive-invalid',
        transaction: { type: 'append_items', items: [item] },
      });
    } catch (caught) {
      error = caught;
    }

    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(
      messageOf('session-transaction-error-redaction', 'Session history transaction items contain invalid or unsupported data.'),
    );
    expect((error as Error).message).not.toContain('api-key-secret');
    expect(await session.getItems()).toEqual([]);
  });

  test('canonicalizes ordinary object prototypes for retries and suffixes', async () => {
    const session = await makeSession({
      sessionId: 'session-transaction-canonical-object',
    });
    const appended = createUserMessage('canonical');
    appended.providerData = Object.assign(Object.create(null), {
      source: 'provider',
    });

    await session.applyHistoryTransaction({
      operationId: 'operation-canonical-append',
      transaction: { type: 'append_items', items: [appended] },
    });
    const [roundTripped] = await session.getItems();
    await session.applyHistoryTransaction({
      operationId: 'operation-canonical-append',
      transaction: { type: 'append_items', items: [roundTripped!] },
    });
    await session.applyHistoryTransaction({
      operationId: 'operation-canonical-replace',
      transaction: {
        type: 'replace_suffix',
        expectedSuffix: [appended],
        replacement: [createUserMessage('replaced')],
      },
    });

    expect(await session.getItems()).toEqual([createUserMessage('replaced')]);
  });

  test('rejects unsupported cloned values without recording the operation', async () => {
    const typedArrayItem = createUserMessage('unsupported-typed-array');
    typedArrayItem.providerData = { values: new Uint16Array([300]) };
    const proxiedItems = new Proxy([createUserMessage('proxied')], {});
    const session = await makeSession({
      sessionId: 'session-transaction-unsupported-clones',
    });

    for (const items of [[typedArrayItem], proxiedItems]) {
      await expect(
        session.applyHistoryTransaction({
          operationId: 'operation-rejected-clone',
          transaction: { type: 'append_items', items },
        }),
      ).rejects.toThrow('items contain invalid or unsupported data');
    }

    await session.applyHistoryTransaction({
      operationId: 'operation-rejected-clone',
      transaction: {
        type: 'append_items',
        items: [createUserMessage('accepted-after-rejections')],
      },
    });
    expect(await session.getItems()).toEqual([
      createUserMessage('accepted-after-rejections'),
    ]);
  });

  test('reads the transaction envelope once and redacts accessor errors', async () => {
    const session = await makeSession({
      sessionId: 'session-transaction-envelope',
    });
    let operationIdReads = 0;
    const args = {
      transaction: {
        type: 'append_items' as const,
        items: [createUserMessage('once')],
      },
    } as SessionHistoryTransactionArgs;
    Object.defineProperty(args, 'operationId', {
      enumerable: true,
      get: () => {
        operationIdReads++;
        return operationIdReads === 1 ? 'operation-read-once' : 'changed';
      },
    });

    await session.applyHistoryTransaction(args);
    expect(operationIdReads).toBe(1);
    operationIdReads = 0;
    await session.applyHistoryTransaction(args);
    expect(operationIdReads).toBe(1);
    expect(await session.getItems()).toEqual([createUserMessage('once')]);

    const throwingArgs = {} as SessionHistoryTransactionArgs;
    Object.defineProperty(throwingArgs, 'operationId', {
      get: () => {
        throw new Error('api-key-secret');
      },
    });
    await expect(session.applyHistoryTransaction(throwingArgs)).rejects.toThrow(
      'Session history transaction arguments are invalid.',
    );
    try {
      await session.applyHistoryTransaction(throwingArgs);
    } catch (error) {
      expect((error as Error).message).not.toContain('api-key-secret');
    }
  });
});

describe('LedgerSession records what the cases did lawfully', () => {
  it('every LedgerSession the cases opened passes checkSessionLaws', async () => {
    expect(ledgers.length).toBeGreaterThan(15);
    for (const { session, log } of ledgers) expect({ id: session.session.id, violations: checkSessionLaws(await readAll(log, session.session.id)) }).toEqual({ id: session.session.id, violations: [] });
  });
});

if (sdkHasHistory) {
  describe('where LedgerSession differs from MemorySession by design', () => {
    it('copies shared-backed binary transaction data (memorySession.test.ts): MemorySession keeps the bytes; LedgerSession refuses them, the log holds JSON (docs/bridges.md, "binary data")', async () => {
      const sharedBytes = new Uint8Array(new SharedArrayBuffer(2));
      sharedBytes.set([3, 7]);
      const item = createUserMessage('binary');
      item.providerData = { bytes: sharedBytes };

      const memory = new MemorySession({ sessionId: 'session-transaction-shared-binary' });
      await memory.applyHistoryTransaction({ operationId: 'operation-shared-binary', transaction: { type: 'append_items', items: [item] } });
      sharedBytes[0] = 9;
      const [stored] = await memory.getItems();
      expect((stored!.providerData?.['bytes'] as Uint8Array)[0]).toBe(3);

      const ledger = await makeLedgerSession({ sessionId: 'session-transaction-shared-binary' });
      await expect(ledger.applyHistoryTransaction({ operationId: 'operation-shared-binary', transaction: { type: 'append_items', items: [item] } })).rejects.toThrow(
        'items contain invalid or unsupported data',
      );
      expect(await ledger.getItems()).toEqual([]);
      // the operation id stays free
      await ledger.applyHistoryTransaction({ operationId: 'operation-shared-binary', transaction: { type: 'append_items', items: [createUserMessage('text')] } });
      expect(await ledger.getItems()).toEqual([createUserMessage('text')]);
    });
  });
}

// historyMutations.test.ts: the SDK's pure function, and LedgerSession's applyHistoryMutations on the same items.
const functionCall = (callId: string, name: string, args: string): Extract<AgentInputItem, { type: 'function_call' }> => ({
  type: 'function_call',
  callId,
  name,
  arguments: args,
  status: 'completed',
});
const userMessage = (content: string): AgentInputItem => ({ type: 'message', role: 'user', content });

describe('applySessionHistoryMutations cases (historyMutations.test.ts), through LedgerSession', () => {
  it('replaces matching function calls once and removes duplicates', async () => {
    const replacement = functionCall('call_1', 'fixed', '{"ok":true}');
    const mutation: SessionHistoryMutation = { type: 'replace_function_call', callId: 'call_1', replacement };
    const items: AgentInputItem[] = [
      userMessage('before'),
      functionCall('call_1', 'broken', '{}'),
      functionCall('call_2', 'keep', '{}'),
      functionCall('call_1', 'duplicate', '{}'),
      userMessage('after'),
    ];
    const expected = [userMessage('before'), replacement, functionCall('call_2', 'keep', '{}'), userMessage('after')];
    expect(applySessionHistoryMutations(items, [mutation])).toEqual(expected);
    const session = await makeLedgerSession({ sessionId: 'mutations-1', initialItems: items });
    await session.applyHistoryMutations({ mutations: [mutation] });
    expect(await session.getItems()).toEqual(expected);
  });

  it('returns cloned items and cloned replacements', async () => {
    const original = functionCall('call_1', 'broken', '{}');
    const replacement = functionCall('call_1', 'fixed', '{"ok":true}');
    const session = await makeLedgerSession({ sessionId: 'mutations-2', initialItems: [original] });
    await session.applyHistoryMutations({ mutations: [{ type: 'replace_function_call', callId: 'call_1', replacement }] });
    const result = await session.getItems();
    expect(result).toEqual([replacement]);
    expect(result[0]).not.toBe(original);
    expect(result[0]).not.toBe(replacement);
  });
});

// session.test.ts: the SDK's own guards recognise LedgerSession.
if (sdkHasHistory) {
  describe('session type guards (session.test.ts), on LedgerSession', () => {
    it('detects the compaction, history rewrite and history transaction capabilities', async () => {
      const session = await makeLedgerSession({ sessionId: 'guards' });
      expect(isOpenAIResponsesCompactionAwareSession(session)).toBe(true);
      expect(isSessionHistoryRewriteAwareSession(session)).toBe(true);
      expect(isSessionHistoryTransactionAwareSession(session)).toBe(true);
      expect(isSessionHistoryTransactionAwareSession(undefined)).toBe(false);
    });
  });
}

describe('what LedgerSession records for the history capabilities', () => {
  it('a mutation is one memory.edited (the replacement names the call it replaces), not a compaction; summary and facts stay', async () => {
    const log = await openMemoryLog();
    const session = await openLedgerSession(log, { sessionId: 'edited' });
    await session.session.memory.setSummary('earlier work');
    await session.session.record([{ type: 'command.failed', command: 'npm test', exitCode: 1 }]);
    await session.addItems([userMessage('go'), functionCall('c1', 'broken', '{}'), functionCall('c1', 'dup', '{}')]);
    const replacement = functionCall('c1', 'fixed', '{"ok":true}');
    await session.applyHistoryMutations({ mutations: [{ type: 'replace_function_call', callId: 'c1', replacement }] });
    // no matching call: nothing recorded
    const head = await log.head('edited');
    await session.applyHistoryMutations({ mutations: [{ type: 'replace_function_call', callId: 'nope', replacement: functionCall('nope', 'x', '{}') }] });
    await session.applyHistoryMutations({ mutations: [] });
    expect(await log.head('edited')).toBe(head);
    const events = await readAll(log, 'edited');
    const edits = events.filter((e): e is Extract<SessionEvent, { type: 'memory.edited' }> => e.type === 'memory.edited');
    expect(edits).toHaveLength(1);
    const calls = events.filter((e) => e.type === 'model.output').flatMap((e) => (e as { seq: number; items: unknown[] }).items.map((_, i) => `${e.seq}:${i}`));
    expect(edits[0]).toMatchObject({ editor: 'openai-agents:applyHistoryMutations', kind: 'replace_function_call', droppedIds: calls });
    expect(edits[0]!.layout).toEqual([{ keep: expect.any(String) }, { item: { type: 'function_call', call_id: 'c1', name: 'fixed', arguments: '{"ok":true}', status: 'completed' }, replaces: calls[0] }]);
    expect(events.some((e) => e.type === 'memory.compacted')).toBe(false);
    const state = session.session.memory.state();
    expect(state.summary).toBe('earlier work');
    expect(state.facts).toHaveLength(1);
    expect(checkSessionLaws(events)).toEqual([]);
    await log.close();
  });

  it('a transaction is atomic and idempotent across a reopen: the operation is recorded with its change, in one append', async () => {
    const log = await openMemoryLog();
    const first = await openLedgerSession(log, { sessionId: 'tx' });
    await first.addItems([createUserMessage('start'), createUserMessage('blocked')]);
    const before = await log.head('tx');
    const args: SessionHistoryTransactionArgs = {
      operationId: 'op-1',
      transaction: { type: 'replace_suffix', expectedSuffix: [createUserMessage('blocked')], replacement: [createUserMessage('accepted'), createUserMessage('more')] },
    };
    await first.applyHistoryTransaction(args);
    const events = await readAll(log, 'tx');
    expect(events.slice(before).map((e) => e.type)).toEqual(['memory.edited']);
    expect(events.at(-1)).toMatchObject({ kind: 'replace_suffix', operationId: 'op-1', droppedIds: ['2:1'] });
    // a new LedgerSession on the same log knows the operation: a retry is a no-op, another transaction under its id is refused
    const second = await openLedgerSession(log, { sessionId: 'tx' });
    const head = await log.head('tx');
    await second.applyHistoryTransaction(args);
    expect(await log.head('tx')).toBe(head);
    const conflict = await second.applyHistoryTransaction({ operationId: 'op-1', transaction: { type: 'append_items', items: [] } }).catch((e: unknown) => e);
    expect(isSessionHistoryError(conflict) && { problem: conflict.problem, operationId: conflict.operationId, sessionId: conflict.sessionId }).toEqual({
      problem: 'operation-conflict',
      operationId: 'op-1',
      sessionId: 'tx',
    });
    const mismatch = await second.applyHistoryTransaction({ operationId: 'op-2', transaction: { type: 'replace_suffix', expectedSuffix: [createUserMessage('gone')], replacement: [] } }).catch((e: unknown) => e);
    expect(isSessionHistoryError(mismatch) && mismatch.problem).toBe('suffix-mismatch');
    expect(await second.getItems()).toEqual([createUserMessage('start'), createUserMessage('accepted'), createUserMessage('more')]);
    // the items the replacement shares with the suffix keep their ids
    await second.applyHistoryTransaction({
      operationId: 'op-3',
      transaction: { type: 'replace_suffix', expectedSuffix: [createUserMessage('accepted'), createUserMessage('more')], replacement: [createUserMessage('accepted'), createUserMessage('changed')] },
    });
    const last = (await readAll(log, 'tx')).at(-1) as Extract<SessionEvent, { type: 'memory.edited' }>;
    expect(last.layout?.slice(0, 2)).toEqual([{ keep: '2:0' }, { keep: `${events.at(-1)!.seq}:1` }]);
    expect(last.droppedIds).toEqual([`${events.at(-1)!.seq}:2`]);
    expect(checkSessionLaws(await readAll(log, 'tx'))).toEqual([]);
    await log.close();
  });

  it('a clear forgets the operations, also for a session opened again; a rewind forgets those after it', async () => {
    const log = await openMemoryLog();
    const session = await openLedgerSession(log, { sessionId: 'clear' });
    const args: SessionHistoryTransactionArgs = { operationId: 'op', transaction: { type: 'append_items', items: [createUserMessage('one')] } };
    await session.applyHistoryTransaction(args);
    await session.clearSession();
    const reopened = await openLedgerSession(log, { sessionId: 'clear' });
    await reopened.applyHistoryTransaction(args);
    expect(await reopened.getItems()).toEqual([createUserMessage('one')]);
    const seq = await log.head('clear');
    await reopened.applyHistoryTransaction({ operationId: 'later', transaction: { type: 'append_items', items: [createUserMessage('two')] } });
    await reopened.session.rewind({ toSeq: seq });
    const afterRewind = await openLedgerSession(log, { sessionId: 'clear' });
    await afterRewind.applyHistoryTransaction({ operationId: 'later', transaction: { type: 'append_items', items: [createUserMessage('two again')] } });
    expect(await afterRewind.getItems()).toEqual([createUserMessage('one'), createUserMessage('two again')]);
    expect(checkSessionLaws(await readAll(log, 'clear'))).toEqual([]);
    await log.close();
  });
});

describe('LedgerSession history capabilities under attack', () => {
  it('a suffix that reaches into the summary (shown first by getItems) is refused: the summary is not an item to replace', async () => {
    const log = await openMemoryLog();
    const session = await openLedgerSession(log, { sessionId: 'summary' });
    await session.session.memory.setSummary('what happened before');
    await session.addItems([createUserMessage('only item')]);
    const shown = await session.getItems();
    expect(shown).toHaveLength(2);
    const head = await log.head('summary');
    const refused = await session.applyHistoryTransaction({ operationId: 'op', transaction: { type: 'replace_suffix', expectedSuffix: shown, replacement: [] } }).catch((e: unknown) => e);
    expect(isSessionHistoryError(refused) && refused.problem).toBe('suffix-mismatch');
    expect(await log.head('summary')).toBe(head);
    // the item alone can be replaced
    await session.applyHistoryTransaction({ operationId: 'op', transaction: { type: 'replace_suffix', expectedSuffix: [shown[1]!], replacement: [createUserMessage('new')] } });
    expect(await session.getItems()).toEqual([shown[0], createUserMessage('new')]);
    await log.close();
  });

  it('calls made at once are applied one after another, in call order, and the session stays lawful', async () => {
    const log = await openMemoryLog();
    const session = await openLedgerSession(log, { sessionId: 'together' });
    await Promise.all([
      session.addItems([createUserMessage('a'), functionCall('c1', 'first', '{}')]),
      session.applyHistoryTransaction({ operationId: 'op-1', transaction: { type: 'append_items', items: [createUserMessage('b')] } }),
      session.applyHistoryMutations({ mutations: [{ type: 'replace_function_call', callId: 'c1', replacement: functionCall('c1', 'second', '{}') }] }),
      session.applyHistoryTransaction({ operationId: 'op-2', transaction: { type: 'replace_suffix', expectedSuffix: [createUserMessage('b')], replacement: [createUserMessage('c')] } }),
    ]);
    expect(await session.getItems()).toEqual([createUserMessage('a'), functionCall('c1', 'second', '{}'), createUserMessage('c')]);
    expect(checkSessionLaws(await readAll(log, 'together'))).toEqual([]);
    await log.close();
  });
});
