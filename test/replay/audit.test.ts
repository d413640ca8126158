// auditSession / auditItem over the demo's coding-agent session (with the structured policy, whose compactions leave Tier-1 placeholders): item lives, steps, compactions, ranges, the fate
// law, a tampered log, and the same audit from a log written with version 1 events.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemoSession } from '../../src/cli/demo/coding-session.js';
import { createPromptResolver, fatesOf, type SessionEvent } from '../../src/events/index.js';
import { GENESIS_HASH, chainHash, openLevelLog, openMemoryLog, type SessionEventLog } from '../../src/log/index.js';
import { eventKey, headKey } from '../../src/log/keys.js';
import { initialMemoryState, memoryReducer, visibleEntries, type MemoryState } from '../../src/memory/index.js';
import { AuditError, auditItem, auditSession, streamAudit, type SessionAudit } from '../../src/replay/index.js';
import { checkFateLaw } from '../../src/testing/index.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

let log: SessionEventLog;
let events: SessionEvent[];
let audit: SessionAudit;
let steps: number;

beforeAll(async () => {
  log = await openMemoryLog();
  ({ steps } = await runDemoSession(log, { tasks: 2, policy: 'structured' }));
  events = await readAll(log, 'demo');
  audit = await auditSession(log, 'demo');
});
afterAll(async () => {
  await log.close();
});

describe('auditSession', () => {
  it('reports every projected step with memory and sent items and tokens, and the budget', () => {
    expect(audit.steps.map((s) => s.step)).toEqual(Array.from({ length: steps }, (_, i) => i + 1));
    for (const s of audit.steps) {
      expect(s.sent.items).toBeLessThanOrEqual(s.memory.items);
      expect(s.sent.tokens).toBeLessThanOrEqual(6000);
      expect(s.memory.tokens).toBeGreaterThan(0);
      expect(s.budget['maxTokens']).toBe(6000);
      expect(s.fates.kept + s.fates.cleared + s.fates.trimmed + s.fates.dropped).toBe(s.memory.items);
    }
    expect(audit.steps.some((s) => s.fates.cleared > 0)).toBe(true);
    expect(audit.totals.steps).toBe(steps);
    expect(audit.totals.tokensSavedByProjection).toBeGreaterThan(0);
  });

  it('reports each compaction with items and tokens before and after, and marks its step', () => {
    expect(audit.compactions.length).toBeGreaterThan(0);
    for (const c of audit.compactions) {
      expect(c).toMatchObject({ trigger: 'auto', policy: 'StructuredSummaryCompactPolicy' });
      expect(c.items.after).toBeLessThan(c.items.before);
      expect(c.tokens).toMatchObject({ tokenizer: 'openai:o200k_base', recorded: true });
      expect(c.tokens.after).toBeLessThan(c.tokens.before);
      expect(audit.steps.find((s) => s.step === c.step)?.compacted).toBe(true);
    }
    expect(audit.totals.compactions).toBe(audit.compactions.length);
    expect(audit.totals.tokensSavedByCompaction).toBe(audit.compactions.reduce((n, c) => n + c.tokens.before - c.tokens.after, 0));
  });

  it("gives every item's life: entered, fates by step, and how it left (policy, summary, placeholder)", () => {
    const entered = new Set<string>();
    let state: MemoryState = initialMemoryState;
    for (const e of events) {
      state = memoryReducer(state, e);
      for (const v of visibleEntries(state)) entered.add(v.id);
    }
    expect(audit.items.map((i) => i.id).sort()).toEqual([...entered].sort());
    const task = audit.items.find((i) => i.kind === 'user message')!;
    expect(task.entered).toMatchObject({ eventType: 'user.input' });
    const compactedAway = audit.items.filter((i) => i.left?.eventType === 'memory.compacted');
    expect(compactedAway.length).toBeGreaterThan(0);
    for (const item of compactedAway) {
      expect(item.left).toMatchObject({ policy: 'StructuredSummaryCompactPolicy', trigger: 'auto' });
      expect(item.left!.summaryId).toMatch(/^\d+:summary$/);
    }
    const placeholders = audit.items.filter((i) => i.replaces !== undefined);
    expect(placeholders.length).toBeGreaterThan(0);
    for (const p of placeholders) {
      const original = audit.items.find((i) => i.id === p.replaces)!;
      expect(original.left?.placeholderId).toBe(p.id);
      expect(p.entered.eventType).toBe('memory.compacted');
    }
    expect(audit.items.some((i) => i.kind === 'summary')).toBe(true);
    const cleared = audit.items.find((i) => i.fates.some((f) => f.fate === 'cleared'))!;
    expect(cleared.kind).toBe('function_call_output');
    expect(cleared.fates.find((f) => f.fate === 'cleared')?.rule).toBe('tier1');
  });

  it('holds the fate law, and agrees with the events', () => {
    expect(checkFateLaw(events, audit)).toEqual([]);
  });

  it('limits steps and items to fromStep..toStep and stops reading after toStep', async () => {
    const part = await auditSession(log, 'demo', { fromStep: 10, toStep: 14 });
    expect(part.steps.map((s) => s.step)).toEqual([10, 11, 12, 13, 14]);
    expect(part.items.length).toBeGreaterThan(0);
    expect(part.items.length).toBeLessThan(audit.items.length);
    for (const item of part.items) {
      const spans = item.fates;
      const touched = spans.some((s) => s.toStep >= 10 && s.fromStep <= 14) || (item.entered.step ?? 0) >= 10;
      expect(touched, item.id).toBe(true);
      expect(spans.every((s) => s.fromStep >= 10 && s.toStep <= 14)).toBe(true);
    }
    expect(part.headSeq).toBeLessThan(audit.headSeq);
    await expect(auditSession(log, 'demo', { fromStep: -1 })).rejects.toThrow('fromStep: must be a non-negative integer');
  });

  it('streams: an item that leaves memory is reported when it leaves, before the end', async () => {
    let seenEnd = false;
    let itemsBeforeLastStep = 0;
    let stepsSeen = 0;
    for await (const r of streamAudit(log, 'demo')) {
      if (r.kind === 'step') stepsSeen += 1;
      if (r.kind === 'item' && r.item.left && stepsSeen < steps) itemsBeforeLastStep += 1;
      if (r.kind === 'end') seenEnd = true;
    }
    expect(seenEnd).toBe(true);
    expect(itemsBeforeLastStep).toBeGreaterThan(0);
  });

  it('reads the log only as far as its records are pulled: a consumer that stops at the first step stops the reading', async () => {
    let read = 0;
    const counting: SessionEventLog = new Proxy(log, {
      get(target, key) {
        if (key === 'read') {
          return async function* (id: string) {
            for await (const e of target.read(id)) {
              read += 1;
              yield e;
            }
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    let first: number | undefined;
    for await (const r of streamAudit(counting, 'demo')) {
      if (r.kind === 'step') {
        first = r.step.step;
        break;
      }
    }
    expect(first).toBe(1);
    const firstAnswer = events.findIndex((e) => e.type === 'model.responded');
    // The first step's record goes out with its model call's answer: nothing after that answer was read.
    expect(read).toBe(firstAnswer + 1);
    expect(read).toBeLessThan(events.length);
  });

  it('names an unknown session or item', async () => {
    await expect(auditSession(log, 'nope')).rejects.toThrow(AuditError);
    await expect(auditSession(log, 'nope')).rejects.toThrow('session "nope": no such session in the log');
    await expect(auditItem(log, 'demo', '999999:0')).rejects.toThrow('no item "999999:0" ever entered memory');
  });
});

describe('auditItem', () => {
  it("gives the same life as the session's audit", async () => {
    const placeholder = audit.items.find((i) => i.replaces !== undefined)!;
    expect(await auditItem(log, 'demo', placeholder.id)).toEqual(placeholder);
    expect(await auditItem(log, 'demo', placeholder.replaces!)).toEqual(audit.items.find((i) => i.id === placeholder.replaces));
  });
});

describe('a tampered projection', () => {
  it('breaks the fate law and the audit names the seq', async () => {
    const copy = await openMemoryLog();
    const target = events.find((e) => e.type === 'context.projected' && e.step === 5)!;
    const payloads = events.map((e) => {
      const { sessionId: _s, seq: _q, at: _a, v: _v, prevHash: _p, hash: _h, ...rest } = e as unknown as Record<string, unknown>;
      if (e.seq === target.seq) return { ...rest, fateRuns: `${String(rest['fateRuns'])} kept:tail` };
      return rest;
    });
    await copy.append('t', payloads as never);
    const tampered = await readAll(copy, 't');
    expect(checkFateLaw(tampered).map((v) => v.seq)).toContain(target.seq);
    await expect(auditSession(copy, 't')).rejects.toThrow(`session "t" seq ${target.seq}: context.projected does not fit memory`);
    // Streamed, every record before the tampered step goes out first: the steps before it, in order, then the error.
    const streamed: number[] = [];
    await expect(
      (async () => {
        for await (const r of streamAudit(copy, 't')) if (r.kind === 'step') streamed.push(r.step.step);
      })(),
    ).rejects.toThrow(AuditError);
    expect(streamed).toEqual([1, 2, 3, 4]);
    await copy.close();
  });
});

describe('a session written with version 1 events', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'context-ledger-audit-v1-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('audits the same as the current layout', async () => {
    // Rewrite each context.projected and model.requested as v1 wrote them, chain them, store them by hand.
    let state: MemoryState = initialMemoryState;
    const prompts = createPromptResolver();
    let prevHash = GENESIS_HASH;
    const stored = events.map((e) => {
      let fields: Record<string, unknown> = { ...(e as unknown as Record<string, unknown>) };
      delete fields['hash'];
      if (e.type === 'context.projected') {
        const fates = fatesOf(e, visibleEntries(state).map((x) => x.id));
        const { fateRuns: _r, ...rest } = fields;
        fields = {
          ...rest,
          v: 1,
          report: { ...e.report, fates: fates.map((f) => ({ index: f.index, fate: f.fate, rule: f.rule })) },
          sent: fates.filter((f) => f.fate !== 'dropped').map((f) => f.id),
          fates: fates.map((f) => ({ id: f.id, fate: f.fate, rule: f.rule })),
        };
      } else if (e.type === 'model.requested') {
        const prompt = prompts.resolve(e);
        const { promptSeq: _p, ...rest } = fields;
        fields = { ...rest, v: 1, ...prompt };
      } else if (e.type === 'memory.compacted') {
        const { tokens: _t, ...rest } = fields;
        fields = { ...rest, v: 1, layout: e.layout.map((slot) => ('item' in slot ? { item: slot.item } : slot)) };
      }
      state = memoryReducer(state, e);
      fields['prevHash'] = prevHash;
      const hash = chainHash(prevHash, fields);
      prevHash = hash;
      return { ...fields, hash } as Record<string, unknown>;
    });
    const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    await db.batch([
      ...stored.map((e) => ({ type: 'put' as const, key: eventKey('demo', Number(e['seq'])), value: JSON.stringify(e) })),
      { type: 'put' as const, key: headKey('demo'), value: JSON.stringify({ seq: stored.length, hash: prevHash }) },
    ]);
    await db.close();

    const old = await openLevelLog(dir);
    try {
      expect((await old.verify('demo')).valid).toBe(true);
      const oldAudit = await auditSession(old, 'demo');
      expect(oldAudit.steps).toEqual(audit.steps);
      // v1 compactions carry no tokens (the audit counts them with the projector's tokenizer) and no `replaces`.
      expect(oldAudit.compactions.map((c) => ({ ...c, tokens: { ...c.tokens, recorded: true }, placeholders: 0 }))).toEqual(
        audit.compactions.map((c) => ({ ...c, placeholders: 0 })),
      );
      const withoutReplaces = (a: SessionAudit) =>
        a.items.map(({ replaces: _r, left, ...rest }) => ({ ...rest, left: left ? { ...left, placeholderId: undefined } : undefined }));
      expect(withoutReplaces(oldAudit)).toEqual(withoutReplaces(audit));
      expect(checkFateLaw(await readAll(old, 'demo'), oldAudit)).toEqual([]);
    } finally {
      await old.close();
    }
  });
});

describe('audit after an erasure that scrubbed copies', () => {
  it('an item is erased when the event it came from was, or names it among the copies it scrubbed; not the others of that event', async () => {
    const memory = await openMemoryLog();
    const secret = { type: 'function_call_output', call_id: 'c1', output: 'TOKEN=abc-secret-123' };
    const hello = { type: 'message', role: 'user', content: 'hello' };
    await memory.append('e', [
      { type: 'user.input', items: [hello] },
      { type: 'model.output', items: [{ type: 'function_call', call_id: 'c1', name: 'cat', arguments: '{}' }] },
      { type: 'tool.result', callId: 'c1', output: 'TOKEN=abc-secret-123' },
      { type: 'memory.restored', items: [hello, secret] },
    ]);
    const result = await memory.erase('e', { itemIds: ['3:0'] }, { reason: 'token', by: 'ops' });
    expect(result.copies).toEqual([4]);
    const restoredSecret = await auditItem(memory, 'e', '4:1');
    expect(restoredSecret.erased).toMatchObject({ seq: result.seq, reason: 'token', by: 'ops' });
    expect(restoredSecret.preview).toBe('[erased]');
    const restoredHello = await auditItem(memory, 'e', '4:0');
    expect(restoredHello.erased).toBeUndefined();
    expect(restoredHello.preview).toBe('hello');
    expect((await auditItem(memory, 'e', '3:0')).erased).toMatchObject({ reason: 'token' });
    await memory.close();
  });
});
