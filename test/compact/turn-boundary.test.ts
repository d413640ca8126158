// findTurnBoundaryCut and findStepBoundaryCut: where memory may be cut when compacting.
import { describe, expect, it } from 'vitest';
import { findStepBoundaryCut, findTurnBoundaryCut } from '../../src/compact/index.js';
import {
  assistantMessage,
  functionCall,
  functionCallOutput,
  reasoning,
  systemMessage,
  userMessage,
  type MemoryItem,
} from '../../src/items/index.js';

const u = (t: string): MemoryItem => userMessage(t);
const a = (t: string): MemoryItem => assistantMessage(t);

describe('findTurnBoundaryCut', () => {
  const items = [u('u0'), a('a0'), u('u1'), a('a1'), a('a1b'), u('u2'), a('a2')];

  it('leaves a cut at or outside the ends where it is', () => {
    expect(findTurnBoundaryCut(items, 0)).toBe(0);
    expect(findTurnBoundaryCut(items, -3)).toBe(-3);
    expect(findTurnBoundaryCut(items, items.length)).toBe(items.length);
    expect(findTurnBoundaryCut(items, items.length + 5)).toBe(items.length + 5);
    expect(findTurnBoundaryCut([], 0)).toBe(0);
  });

  it('stays on a user message', () => {
    expect(findTurnBoundaryCut(items, 2)).toBe(2);
    expect(findTurnBoundaryCut(items, 5)).toBe(5);
  });

  it('walks back to the nearest user message', () => {
    expect(findTurnBoundaryCut(items, 1)).toBe(0);
    expect(findTurnBoundaryCut(items, 3)).toBe(2);
    expect(findTurnBoundaryCut(items, 4)).toBe(2);
    expect(findTurnBoundaryCut(items, 6)).toBe(5);
  });

  it('does not count system, developer or tool messages as user turns', () => {
    const mixed = [u('u0'), systemMessage('s'), { type: 'message', role: 'developer', content: 'd' } as MemoryItem, { type: 'message', role: 'tool', content: 't' } as MemoryItem, a('a')];
    expect(findTurnBoundaryCut(mixed, 4)).toBe(0);
  });

  it('stays at the naive cut when there is no user message at or before it', () => {
    const noUser = [systemMessage('s'), a('a0'), a('a1'), reasoning('r1', 'think'), a('a2')];
    expect(findTurnBoundaryCut(noUser, 3)).toBe(3);
    const userLater = [a('a0'), a('a1'), a('a2'), u('u3')];
    expect(findTurnBoundaryCut(userLater, 2)).toBe(2);
  });

  it('never cuts between a tool call and its output', () => {
    // no user message before the cut: the naive cut at the output moves back to the call
    const calls = [a('a0'), functionCall('c1', 'bash', {}), functionCallOutput('c1', 'ok'), a('a1')];
    expect(findTurnBoundaryCut(calls, 2)).toBe(1);
    expect(findTurnBoundaryCut(calls, 3)).toBe(3);

    // a Chat-style assistant message with two calls and both outputs: a cut between the outputs moves before the message
    const chat = [a('a0'), assistantMessage('', [{ id: 't1', name: 'read_file' }, { id: 't2', function: { name: 'bash' } }]), functionCallOutput('t1', '1'), functionCallOutput('t2', '2'), a('done')];
    expect(findTurnBoundaryCut(chat, 3)).toBe(1);
    expect(findTurnBoundaryCut(chat, 2)).toBe(1);

    // Anthropic tool_use parts are calls too
    const toolUse = [a('a0'), { type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 'x1', name: 'grep', input: {} }] } as MemoryItem, functionCallOutput('x1', 'hit'), a('a1')];
    expect(findTurnBoundaryCut(toolUse, 2)).toBe(1);
  });

  it('moves back from a user message that sits between a call and its output', () => {
    // the user interjects while a call is running: cutting at the user message would orphan the output
    const interjection = [u('u0'), a('a0'), functionCall('c1', 'bash', {}), u('u1'), functionCallOutput('c1', 'ok'), a('a1')];
    expect(findTurnBoundaryCut(interjection, 4)).toBe(2);
    expect(findTurnBoundaryCut(interjection, 5)).toBe(2);
  });

  it('ignores outputs without a call and calls without an output', () => {
    const orphans = [a('a0'), functionCallOutput('gone', 'x'), a('a1'), functionCall('never', 'bash', {}), a('a2')];
    expect(findTurnBoundaryCut(orphans, 2)).toBe(2);
    expect(findTurnBoundaryCut(orphans, 4)).toBe(4);
  });

  it('lands on 0 for a session that is one request followed by tool steps', () => {
    const oneRequest: MemoryItem[] = [u('do it')];
    for (let i = 0; i < 20; i++) oneRequest.push(functionCall(`c${i}`, 'bash', {}), functionCallOutput(`c${i}`, 'ok'));
    expect(findTurnBoundaryCut(oneRequest, 30)).toBe(0);
  });
});

describe('findStepBoundaryCut', () => {
  const steps: MemoryItem[] = [u('do it')];
  for (let i = 0; i < 5; i++) steps.push(functionCall(`c${i}`, 'bash', {}), functionCallOutput(`c${i}`, 'ok'));
  // indexes: 0 user, 1 call c0, 2 out c0, 3 call c1, 4 out c1, ...

  it('stays on a step start and moves back from an output to its call', () => {
    expect(findStepBoundaryCut(steps, 3)).toBe(3);
    expect(findStepBoundaryCut(steps, 4)).toBe(3);
    expect(findStepBoundaryCut(steps, 2)).toBe(1);
  });

  it('keeps the cut strictly inside the items', () => {
    expect(findStepBoundaryCut(steps, 0)).toBe(1);
    expect(findStepBoundaryCut(steps, -5)).toBe(1);
    expect(findStepBoundaryCut(steps, 99)).toBe(9);
  });

  it('looks forward when there is no boundary before the cut', () => {
    const chat = [assistantMessage('', [{ id: 't1', name: 'a' }, { id: 't2', name: 'b' }]), functionCallOutput('t1', '1'), functionCallOutput('t2', '2'), a('done')];
    expect(findStepBoundaryCut(chat, 2)).toBe(3);
  });

  it('is -1 when no cut keeps every call with its output', () => {
    expect(findStepBoundaryCut([u('x')], 0)).toBe(-1);
    expect(findStepBoundaryCut([], 0)).toBe(-1);
    const one = [functionCall('c', 'bash', {}), functionCallOutput('c', 'ok')];
    expect(findStepBoundaryCut(one, 1)).toBe(-1);
  });
});
