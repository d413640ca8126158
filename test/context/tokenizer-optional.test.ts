// gpt-tokenizer is an optional peer: without it, openAiTokenizer fails on its first count with a message saying what to install.
import { describe, expect, it, vi } from 'vitest';

vi.mock('node:module', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:module')>();
  return {
    ...actual,
    createRequire: (url: string | URL) => {
      const real = actual.createRequire(url);
      return Object.assign((id: string) => {
        if (id.startsWith('gpt-tokenizer')) {
          throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
        }
        return real(id);
      }, real);
    },
  };
});

describe('openAiTokenizer without gpt-tokenizer installed', () => {
  it('imports fine, builds the tokenizer, and the first count says to install gpt-tokenizer', async () => {
    const { openAiTokenizer, approxTokenizer } = await import('../../src/context/measure/tokenizer.js');
    const tokenizer = openAiTokenizer('cl100k_base');
    expect(tokenizer.name).toBe('openai:cl100k_base');
    expect(tokenizer.count('')).toBe(0);
    expect(() => tokenizer.count('hello')).toThrow(/needs the optional peer dependency gpt-tokenizer \(\^4\): run `npm install gpt-tokenizer`/);
    expect(approxTokenizer.count('hello')).toBe(2);
  });
});

describe('an agent whose projector counts with openAiTokenizer, without gpt-tokenizer installed', () => {
  it('fails its first run with a message that says which package to install', async () => {
    const { Agents, ScriptedModelClient, TypeAwareContextProjector, assistantMessage, openAiTokenizer, openMemoryLog } = await import('../../src/index.js');
    const agent = Agents.react({
      modelClient: new ScriptedModelClient([{ outputText: 'ok', items: [assistantMessage('ok')] }]),
      model: 'm',
      log: await openMemoryLog(),
      contextProjector: new TypeAwareContextProjector({ tokenizer: openAiTokenizer('o200k_base') }),
      contextBudget: { maxTokens: 1000 },
    });
    const session = await agent.newSession();
    await expect(session.run('hello')).rejects.toThrow(/npm install gpt-tokenizer/);
  });
});
