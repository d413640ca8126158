// The small shared helpers that replaced copies in several layers: oneLine, uniqueStrings, isFactEvent.
import { describe, expect, it } from 'vitest';
import { FACT_EVENT_TYPES, isFactEvent, type NewSessionEvent } from '../../src/events/index.js';
import { oneLine, uniqueStrings } from '../../src/base/index.js';
import { factLists } from '../../src/compact/facts.js';
import { oneLine as cliOneLine } from '../../src/cli/output.js';

describe('oneLine', () => {
  it('folds white space, trims, and cuts to max characters ending in …', () => {
    expect(oneLine('  npm   test\n\t3 failed  ', 80)).toBe('npm test 3 failed');
    expect(oneLine('abcdef', 6)).toBe('abcdef');
    expect(oneLine('abcdefg', 6)).toBe('abcde…');
    expect(oneLine('abcdefg', 6)).toHaveLength(6);
    expect(oneLine('', 3)).toBe('');
  });

  it('is what fact lists (200) and CLI tables (80 by default) use', () => {
    const long = `${'x'.repeat(250)}\n`;
    expect(factLists([{ type: 'command.failed', command: long, seq: 1 }]).failedCommands).toEqual([oneLine(long, 200)]);
    expect(cliOneLine('a\n'.repeat(100))).toBe(oneLine('a\n'.repeat(100), 80));
    expect(cliOneLine('a b', 2)).toBe('a…');
  });
});

describe('uniqueStrings', () => {
  it('merges lists in order, each string at its first place; an absent list is empty', () => {
    expect(uniqueStrings(['a.ts', 'b.ts'], undefined, ['b.ts', 'c.ts', 'a.ts'])).toEqual(['a.ts', 'b.ts', 'c.ts']);
    expect(uniqueStrings(['x', 'x'])).toEqual(['x']);
    expect(uniqueStrings()).toEqual([]);
  });
});

describe('isFactEvent', () => {
  it('is true exactly for the FACT_EVENT_TYPES', () => {
    const facts: NewSessionEvent[] = [
      { type: 'command.failed', command: 'npm test' },
      { type: 'test.result', status: 'passed' },
      { type: 'approval.recorded', action: 'deploy', approved: true },
      { type: 'sandbox.state', description: 'clean' },
      { type: 'artifact.changed', path: 'a.ts', change: 'modified' },
    ];
    expect(facts.map((e) => e.type)).toEqual([...FACT_EVENT_TYPES]);
    expect(facts.every(isFactEvent)).toBe(true);
    const others: NewSessionEvent[] = [{ type: 'user.input', items: [] }, { type: 'memory.cleared' }, { type: 'tool.result', callId: 'c', output: 'o' }];
    expect(others.some(isFactEvent)).toBe(false);
  });
});
