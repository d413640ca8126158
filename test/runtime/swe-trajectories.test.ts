// Real mini-SWE-agent runs (../shared/data/swe-trajectories) through the Chat Completions converter and back, without loss.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isFunctionCall, isFunctionCallOutput, isReasoning } from '../../src/items/index.js';
import {
  fromAnthropicMessages,
  fromChatCompletions,
  toAnthropicMessages,
  toChatCompletions,
} from '../../src/providers/index.js';
import type { ChatMessage } from '../../src/providers/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dataDir = path.resolve(repoRoot, '../shared/data/swe-trajectories');
const exists = existsSync(dataDir);
const files = exists ? readdirSync(dataDir).filter((name) => name.endsWith('.traj.json')).sort() : [];

if (!exists) {
  console.warn(`swe-trajectories: ${dataDir} is absent, so the real-run round-trip tests are skipped.`);
}

const readMessages = (file: string): ChatMessage[] =>
  (JSON.parse(readFileSync(path.join(dataDir, file), 'utf8')) as { messages: ChatMessage[] }).messages;

describe.skipIf(!exists)('real Chat Completions transcripts (mini-SWE-agent)', () => {
  it('finds the 14 runs the README describes', () => {
    expect(files).toHaveLength(14);
  });

  describe.each(files)('%s', (file) => {
    const messages = readMessages(file);
    const items = fromChatCompletions(messages);

    it('imports and exports back deep-equal', () => {
      expect(toChatCompletions(items)).toStrictEqual(messages);
    });

    it('imports every tool call, tool output and reasoning_content as its own item', () => {
      const calls = messages.flatMap((message) => message.tool_calls ?? []);
      const outputs = messages.filter((message) => message.role === 'tool');
      const reasoned = messages.filter((message) => typeof message.reasoning_content === 'string');
      expect(items.filter(isFunctionCall).map((item) => item.call_id)).toStrictEqual(calls.map((call) => call.id));
      expect(items.filter(isFunctionCallOutput).map((item) => item.call_id)).toStrictEqual(outputs.map((message) => message.tool_call_id));
      expect(items.filter(isReasoning)).toHaveLength(reasoned.length);
    });

    it('exports to Anthropic alternating turns, stable through import and export', () => {
      const lossless = toAnthropicMessages(items);
      expect(toAnthropicMessages(fromAnthropicMessages(lossless))).toStrictEqual(lossless);
      const strict = toAnthropicMessages(items, { strict: true });
      strict.messages.forEach((message, index) => {
        expect(['user', 'assistant']).toContain(message.role);
        if (index > 0) expect(message.role).not.toBe(strict.messages[index - 1]?.role);
      });
    });
  });
});
