// Fault: numeric options were not validated (compactAbove: NaN turned compaction off, checkpointEvery: -5 turned checkpoints off, codeTimeoutMs: NaN accepted).
import { describe, expect, it } from 'vitest';
import {
  Agents,
  InvalidCodeActOptionError,
  InvalidOptionsError,
  LlmCompactPolicy,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  isInvalidOptionsError,
  openMemoryLog,
  openSession,
  type AgentOptions,
} from '../../src/index.js';

const base = (): AgentOptions => ({ modelClient: new ScriptedModelClient([]), model: 'm' });
const thrown = (make: () => unknown): InvalidOptionsError => {
  try {
    make();
  } catch (error) {
    if (isInvalidOptionsError(error)) return error;
    throw error;
  }
  throw new Error('did not throw');
};

describe('every options object is validated with a clear error naming the option', () => {
  const agentCases: [string, Partial<Record<string, unknown>>, string][] = [
    ['maxSteps: 0', { maxSteps: 0 }, 'maxSteps'],
    ['maxSteps: NaN', { maxSteps: NaN }, 'maxSteps'],
    ['maxSteps: Infinity', { maxSteps: Infinity }, 'maxSteps'],
    ['checkpointEvery: -5', { checkpointEvery: -5 }, 'checkpointEvery'],
    ['model: empty', { model: '' }, 'model'],
    ['modelClient without create', { modelClient: {} }, 'modelClient'],
    ['a typo', { maxStep: 10 }, 'maxStep'],
    ['a hook that is not a function', { hooks: { beforeTurn: 'x' } }, 'hooks.beforeTurn'],
    ['an unknown hook', { hooks: { beforeTurns: () => undefined } }, 'hooks.beforeTurns'],
    ['a tool without a name', { tools: [{ name: '', description: 'd', parameters: { safeParse: () => 0 }, execute: () => 0 }] }, 'tools.0.name'],
    ['ids that is not a function', { ids: 'abc' }, 'ids'],
  ];
  for (const [what, patch, path] of agentCases) {
    it(`Agents.react ${what} → InvalidOptionsError at ${path}`, () => {
      for (const make of [Agents.react, Agents.deepResearch, Agents.codeAct]) {
        const error = thrown(() => make({ ...base(), ...patch } as AgentOptions));
        expect(error.issues.map((i) => i.path)).toContain(path);
        expect(error.message).toMatch(new RegExp(`^invalid options for Agents\\.(react|deepResearch|codeAct): .*${path.replace(/\./g, '\\.')}: `));
      }
    });
  }

  it('codeTimeoutMs: NaN is refused for every runtime, naming the option (InvalidCodeActOptionError)', () => {
    for (const make of [Agents.react, Agents.deepResearch, Agents.codeAct]) {
      expect(() => make({ ...base(), codeTimeoutMs: NaN })).toThrow(InvalidCodeActOptionError);
      expect(() => make({ ...base(), codeTimeoutMs: NaN })).toThrow(/^codeTimeoutMs: .*got NaN/);
    }
  });

  it('valid options still build agents', () => {
    expect(() => Agents.react({ ...base(), maxSteps: 3, checkpointEvery: 0, codeTimeoutMs: 100, hooks: { afterTurn: () => undefined } })).not.toThrow();
  });

  it('LlmCompactPolicy: compactAbove NaN, negative sizes, compactAbove below maxItems', () => {
    const client = new ScriptedModelClient([]);
    expect(thrown(() => new LlmCompactPolicy(client, 'm', 10, { compactAbove: NaN })).message).toBe(
      'invalid options for LlmCompactPolicy: options.compactAbove: expected number, received NaN',
    );
    expect(thrown(() => new LlmCompactPolicy(client, 'm', 10, { maxItemChars: -1 })).issues[0]!.path).toBe('options.maxItemChars');
    expect(thrown(() => new LlmCompactPolicy(client, 'm', NaN)).issues[0]!.path).toBe('maxItems');
    expect(thrown(() => new LlmCompactPolicy(client, 'm', 10, { compactAbove: 5 })).issues[0]).toEqual({ path: 'options.compactAbove', message: 'must be at least maxItems (10), got 5' });
    expect(thrown(() => new LlmCompactPolicy(client, 'm', 10, { compactAbov: 30 } as never)).issues[0]!.path).toBe('options.compactAbov');
  });

  it('StructuredSummaryCompactPolicy: compactAbove NaN and maxSummaryChars -1', () => {
    expect(thrown(() => new StructuredSummaryCompactPolicy({ maxItems: 5 }, undefined, { compactAbove: NaN })).issues[0]!.path).toBe('compactAbove');
    expect(thrown(() => new StructuredSummaryCompactPolicy({}, undefined, { maxSummaryChars: -1 })).issues[0]!.path).toBe('maxSummaryChars');
  });

  it('openSession: checkpointEvery -5, an empty id, an unknown option', async () => {
    const log = await openMemoryLog();
    await expect(openSession(log, { checkpointEvery: -5 })).rejects.toThrow('invalid options for openSession: checkpointEvery: ');
    await expect(openSession(log, { id: '' })).rejects.toThrow(/openSession: id: /);
    await expect(openSession(log, { checkpointEvry: 5 } as never)).rejects.toThrow(/checkpointEvry: unknown option/);
    await expect(openSession(log, { hooks: { onCompact: 1 } } as never)).rejects.toThrow(/hooks\.onCompact: expected a function/);
    expect(await log.head('anything')).toBe(0);
  });

  it('run options: a signal that is not an AbortSignal', async () => {
    const session = await Agents.react(base()).newSession();
    await expect(session.run('x', { signal: {} as AbortSignal })).rejects.toThrow('invalid options for run: signal: expected an AbortSignal');
  });
});
