// Tool parameters as a zod 4 schema, a zod 3 schema or a JSON Schema: the provider spec, validated calls, and errors at defineTool.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod-v3';
import { Agents, ScriptedModelClient, defineTool, functionCall, openMemoryLog, type ToolContext } from '../../src/index.js';
import { runTool, toolSpec } from '../../src/runtime/tools.js';

const context: ToolContext = { sessionId: 's', runId: 'r', step: 1, callId: 'c', signal: new AbortController().signal, record: async () => {} };

describe('tool parameters', () => {
  it('a zod 3 schema: JSON Schema for the provider, typed and validated arguments', async () => {
    const tool = defineTool({
      name: 'search',
      description: 'Search',
      parameters: z3.object({ query: z3.string().describe('what to look for'), limit: z3.number().int().optional(), mode: z3.enum(['fast', 'deep']).default('fast') }),
      execute: ({ query, limit, mode }) => `${query.toUpperCase()} ${limit ?? '-'} ${mode}`,
    });
    expect(toolSpec(tool).parameters).toEqual({
      type: 'object',
      properties: { query: { type: 'string', description: 'what to look for' }, limit: { type: 'integer' }, mode: { type: 'string', enum: ['fast', 'deep'], default: 'fast' } },
      required: ['query'],
      additionalProperties: false,
    });
    expect(await runTool(tool, 'search', '{"query":"x"}', context)).toEqual({ output: 'X - fast', isError: false });
    const bad = await runTool(tool, 'search', '{"query":3}', context);
    expect(bad.isError).toBe(true);
    expect(bad.output).toMatch(/^Error: invalid arguments for search: query: /);
  });

  it('a plain JSON Schema, validated with ajv', async () => {
    const tool = defineTool({
      name: 'ls',
      description: 'List a folder',
      parameters: { type: 'object', properties: { dir: { type: 'string' } }, required: ['dir'], additionalProperties: false },
      execute: ({ dir }) => `listed ${String(dir)}`,
    });
    expect(toolSpec(tool).parameters).toEqual({ type: 'object', properties: { dir: { type: 'string' } }, required: ['dir'], additionalProperties: false });
    expect(await runTool(tool, 'ls', '{"dir":"/tmp"}', context)).toEqual({ output: 'listed /tmp', isError: false });
    const missing = await runTool(tool, 'ls', '{}', context);
    expect(missing).toEqual({ output: "Error: invalid arguments for ls: arguments must have required property 'dir'", isError: true });
    expect((await runTool(tool, 'ls', '{"dir":"/","x":1}', context)).output).toMatch(/must NOT have additional properties/);
  });

  it('a zod 4 schema still works as before', async () => {
    const tool = defineTool({ name: 'echo', description: 'Echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
    expect(toolSpec(tool).parameters).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    expect((await runTool(tool, 'echo', '{"text":1}', context)).output).toMatch(/^Error: invalid arguments for echo: /);
  });

  it('bad parameters fail in defineTool with the tool name, not at the first step', () => {
    const define = (parameters: unknown) => () => defineTool({ name: 'broken', description: '', parameters: parameters as never, execute: () => '' });
    expect(define(undefined)).toThrow(/tool "broken": parameters must be a zod 4 schema, a zod 3 schema or a JSON Schema object, got undefined/);
    expect(define('string')).toThrow(/got string/);
    expect(define({ type: 'string' })).toThrow(/JSON Schema with type 'object'/);
    expect(define({ type: 'object', properties: { a: { type: 'nonsense' } } })).toThrow(/tool "broken": its JSON Schema is invalid/);
    expect(define(z.string())).toThrow(/must describe an object/);
    expect(define(z.object({ at: z.date() }))).toThrow(/tool "broken": its zod schema has no JSON Schema form/);
    expect(define(z3.object({ at: z3.date() }))).toThrow(/tool "broken": zod 3 type ZodDate at at has no JSON Schema here/);
    expect(define(z3.string())).toThrow(/must be a zod object schema/);
    expect(() => defineTool({ name: '', description: '', parameters: z.object({}), execute: () => '' })).toThrow(/name: must be a non-empty string/);
  });

  it('the runtime runs a zod 3 tool end to end', async () => {
    const tool = defineTool({ name: 'add', description: 'Add', parameters: z3.object({ a: z3.number(), b: z3.number() }), execute: ({ a, b }) => String(a + b) });
    const model = new ScriptedModelClient([{ items: [functionCall('k', 'add', { a: 2, b: 3 })] }, { outputText: 'five', items: [] }]);
    const agent = Agents.react({ modelClient: model, model: 'm', tools: [tool], log: await openMemoryLog() });
    const session = await agent.newSession();
    const result = await session.run('add');
    expect(result.outputText).toBe('five');
    expect(session.memory.getItems()).toContainEqual({ type: 'function_call_output', call_id: 'k', output: '5' });
  });
});
