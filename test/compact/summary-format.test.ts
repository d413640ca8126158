// parseSummaryAnswer and renderSummary: the forgiving read of a summarizer's answer and its section rendering.
import { describe, expect, it } from 'vitest';
import { SUMMARY_KEYS, parseSummaryAnswer, renderSummary } from '../../src/compact/index.js';

const empty = { completed: [], pending: [], decisions: [], errors: [], testResults: [], openQuestions: [] };

describe('parseSummaryAnswer', () => {
  it('asks for exactly the reference keys', () => {
    expect(SUMMARY_KEYS).toEqual(['goal', 'completed', 'pending', 'decisions', 'errors', 'testResults', 'openQuestions']);
  });

  it('reads a plain JSON object', () => {
    expect(parseSummaryAnswer('{"goal":"g","completed":["a","b"],"openQuestions":["q"]}')).toEqual({ ...empty, goal: 'g', completed: ['a', 'b'], openQuestions: ['q'] });
  });

  it('reads JSON inside a fence and inside prose (first { to last })', () => {
    expect(parseSummaryAnswer('```json\n{"pending":["p"]}\n```')).toEqual({ ...empty, pending: ['p'] });
    expect(parseSummaryAnswer('Summary follows. {"decisions":["d"]} Thanks!')).toEqual({ ...empty, decisions: ['d'] });
  });

  it('takes a string where a list was asked as a one-element list, and drops blank entries', () => {
    expect(parseSummaryAnswer('{"errors":"boom","testResults":["", "  ", "ok"],"completed":"  "}')).toEqual({ ...empty, errors: ['boom'], testResults: ['ok'] });
  });

  it('turns non-string entries into their JSON text', () => {
    expect(parseSummaryAnswer('{"completed":[{"file":"a.ts"}, 3, null],"goal":{"text":"g"}}')).toEqual({
      ...empty,
      completed: ['{"file":"a.ts"}', '3'],
      goal: '{"text":"g"}',
    });
  });

  it('leaves out a missing, null or blank goal', () => {
    expect(parseSummaryAnswer('{"goal":null}')).toEqual(empty);
    expect(parseSummaryAnswer('{"goal":"  "}')).toEqual(empty);
    expect(parseSummaryAnswer('{}')).toEqual(empty);
  });

  it('is undefined when there is no JSON object', () => {
    expect(parseSummaryAnswer('just prose')).toBeUndefined();
    expect(parseSummaryAnswer('')).toBeUndefined();
    expect(parseSummaryAnswer('} backwards {')).toBeUndefined();
    expect(parseSummaryAnswer('{not json}')).toBeUndefined();
    expect(parseSummaryAnswer('[{"goal":"in an array"}]')).toEqual({ ...empty, goal: 'in an array' });
  });
});

describe('renderSummary', () => {
  it('renders every section in order', () => {
    expect(
      renderSummary({ goal: 'g', completed: ['c'], pending: ['p'], decisions: ['d'], errors: ['e'], testResults: ['t'], openQuestions: ['q'] }),
    ).toBe(
      ['## Goal\ng', '## Progress\n- c', '## Pending\n- p', '## Key Decisions\n- d', '## Errors\n- e', '## Test Results\n- t', '## Open Questions\n- q'].join('\n\n'),
    );
  });

  it('is empty when there is nothing to report', () => {
    expect(renderSummary(empty)).toBe('');
  });
});
