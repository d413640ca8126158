// Working memory in the audit and the report data: each step carries its blocks' text (the report shares each text once).
import { describe, expect, it } from 'vitest';
import { Agents, ScriptedModelClient, assistantMessage, functionCall, openMemoryLog, type ModelResult } from '../../src/index.js';
import { auditSession, renderReport, reportData } from '../../src/replay/index.js';
import { memoryAt } from '../../src/replay/index.js';

const call = (id: string, args: object): ModelResult => ({ items: [functionCall(id, 'working_memory', args)] });

const sessionWithNotes = async () => {
  const log = await openMemoryLog();
  const model = new ScriptedModelClient([
    call('w1', { operation: 'set', block: 'plan', text: '1. read the parser' }),
    call('w2', { operation: 'append', block: 'plan', text: '\n2. fix the <escape> bug' }),
    call('w3', { operation: 'set', block: 'facts', text: 'repo: acme/api' }),
    { outputText: 'done', items: [assistantMessage('done')] },
  ]);
  const agent = Agents.react({
    modelClient: model,
    model: 'm',
    log,
    workingMemory: { blocks: [{ name: 'plan', maxChars: 200, description: 'the steps left' }, { name: 'facts', maxChars: 100 }] },
  });
  const session = await agent.newSession();
  await session.run('plan it');
  return { log, id: session.id };
};

describe('working memory in the audit and the report', () => {
  it("the audit gives each step's blocks with their text, as memory held them when the step was projected", async () => {
    const { log, id } = await sessionWithNotes();
    const audit = await auditSession(log, id);
    expect(audit.steps).toHaveLength(4);
    for (const step of audit.steps) {
      const memory = (await memoryAt(log, id, { seq: step.seq - 1 })).memory;
      expect(step.workingMemory?.id).toBe(memory.blocksId);
      expect(step.workingMemory?.blocks.map((b) => [b.name, b.text, b.chars])).toEqual(memory.blocks.map((b) => [b.name, b.text, b.text.length]));
    }
    expect(audit.steps[0]!.workingMemory?.blocks).toEqual([
      { name: 'plan', text: '', chars: 0, maxChars: 200, description: 'the steps left' },
      { name: 'facts', text: '', chars: 0, maxChars: 100 },
    ]);
    expect(audit.steps[3]!.workingMemory?.blocks.map((b) => b.text)).toEqual(['1. read the parser\n2. fix the <escape> bug', 'repo: acme/api']);
  });

  it('the report data names each block text by index into workingMemoryTexts, each distinct text once', async () => {
    const { log, id } = await sessionWithNotes();
    const data = await reportData(log, id);
    const audit = await auditSession(log, id);
    expect(data.steps.map((s) => s.workingMemory?.blocks.map((b) => data.workingMemoryTexts[b.textIndex]))).toEqual(
      audit.steps.map((s) => s.workingMemory?.blocks.map((b) => b.text)),
    );
    expect(data.steps[3]!.workingMemory?.blocks[0]).toMatchObject({ name: 'plan', chars: 42, maxChars: 200, description: 'the steps left' });
    expect(new Set(data.workingMemoryTexts).size).toBe(data.workingMemoryTexts.length);
    expect(data.workingMemoryTexts).toEqual(['', '1. read the parser', '1. read the parser\n2. fix the <escape> bug', 'repo: acme/api']);
    // the page renders them in the step view
    expect(renderReport(data)).toContain("id: 'working-memory'");
  });
});
