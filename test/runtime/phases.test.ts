// The phase machine of a run: DeepResearch's plan → research → report, ReAct's and CodeAct's one phase.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/index.js';
import { CODEACT_PROMPT } from '../../src/runtime/codeact.js';
import { firstPhase, parsePlan, phaseAfter, stepPlanFor } from '../../src/runtime/phases.js';

const echo = defineTool({ name: 'echo', description: 'Echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text });

describe('run phases', () => {
  it('DeepResearch plans first unless the open run has its plan; the others have one phase', () => {
    expect(firstPhase('deepResearch', false)).toBe('plan');
    expect(firstPhase('deepResearch', true)).toBe('research');
    expect(firstPhase('react', false)).toBe('main');
    expect(firstPhase('codeAct', true)).toBe('main');
  });

  it('a plan is followed by research; tool calls keep the phase; research ends in the report; the rest finish', () => {
    expect(phaseAfter('plan', 0)).toBe('research');
    expect(phaseAfter('plan', 2)).toBe('research');
    expect(phaseAfter('research', 1)).toBe('research');
    expect(phaseAfter('research', 0)).toBe('report');
    expect(phaseAfter('report', 1)).toBe('report');
    expect(phaseAfter('report', 0)).toBe('finished');
    expect(phaseAfter('main', 3)).toBe('main');
    expect(phaseAfter('main', 0)).toBe('finished');
  });

  it('plan and report steps offer no tools; the instruction follows the agent prompt after a blank line', () => {
    const agent = { kind: 'deepResearch' as const, systemPrompt: 'You research.', tools: [echo] };
    const plan = stepPlanFor('plan', agent);
    expect(plan.tools).toEqual([]);
    expect(plan.systemPrompt).toMatch(/^You research\.\n\nFirst write a short numbered research plan/);
    expect(stepPlanFor('research', agent).tools).toEqual([echo]);
    expect(stepPlanFor('report', agent)).toMatchObject({ tools: [], systemPrompt: expect.stringMatching(/^You research\.\n\nWrite the final report/) });
    expect(stepPlanFor('plan', { ...agent, systemPrompt: undefined }).systemPrompt).toMatch(/^First write/);
  });

  it('ReAct keeps the agent prompt as is (absent stays absent); CodeAct adds its instruction', () => {
    expect(stepPlanFor('main', { kind: 'react', systemPrompt: undefined, tools: [echo] })).toEqual({ systemPrompt: undefined, tools: [echo] });
    expect(stepPlanFor('main', { kind: 'react', systemPrompt: 'p', tools: [] })).toEqual({ systemPrompt: 'p', tools: [] });
    expect(stepPlanFor('main', { kind: 'codeAct', systemPrompt: 'p', tools: [echo] }).systemPrompt).toBe(`p\n\n${CODEACT_PROMPT}`);
    expect(stepPlanFor('main', { kind: 'codeAct', systemPrompt: undefined, tools: [] }).systemPrompt).toBe(CODEACT_PROMPT);
  });

  it('parsePlan takes the numbered or bulleted lines, else every non-empty line', () => {
    expect(parsePlan('Plan:\n1. read\n2) write\n- test\n* ship\n• done')).toEqual(['read', 'write', 'test', 'ship', 'done']);
    expect(parsePlan('  look around \n\n report ')).toEqual(['look around', 'report']);
    expect(parsePlan('')).toEqual([]);
  });
});
