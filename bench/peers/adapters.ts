// Adapters from Chat Completions messages to each peer library's message type, and the peers' trimming calls.
import { createRequire } from 'node:module';
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  trimMessages,
} from '@langchain/core/messages';
import type { CoreMessage } from '@mastra/core/llm';
import { TokenLimiter } from '@mastra/memory/processors';
import { type ModelMessage, pruneMessages } from 'ai';
import type { ChatMessage, ChatToolCall, PeerLibraries, PeerOptions, PeerTrimmer } from './ensure.js';

const require = createRequire(import.meta.url);
const versionOf = (name: string): string => (require(`${name}/package.json`) as { version: string }).version;

const parseArguments = (text: string): Record<string, unknown> => {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  } catch {
    return { raw: text };
  }
};

/**
 * Remembers each tool call's original argument text and name, so a message converted back to Chat Completions is
 * counted on exactly the text the source had (the peers store parsed arguments).
 */
class ToolCallTable {
  private readonly argumentsById = new Map<string, string>();
  private readonly namesById = new Map<string, string>();
  remember(call: ChatToolCall): void {
    this.argumentsById.set(call.id, call.function.arguments);
    this.namesById.set(call.id, call.function.name);
  }
  argumentsOf(id: string, parsed: unknown): string {
    return this.argumentsById.get(id) ?? JSON.stringify(parsed ?? {});
  }
  nameOf(id: string): string {
    return this.namesById.get(id) ?? 'unknown_tool';
  }
}

const toolCall = (id: string, name: string, args: string): ChatToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

// ---------------------------------------------------------------- LangChain

const createLangChain = ({ countChat }: PeerOptions): PeerTrimmer<BaseMessage> => {
  const calls = new ToolCallTable();
  // Counts cached by message id across calls: trimMessages copies every message on each call, so an identity cache
  // would be cold every time; ids survive the copy. This is the most favourable counter we could give it.
  const countsById = new Map<string, number>();
  let nextId = 0;

  const toChatOne = (message: BaseMessage): ChatMessage[] => {
    const content = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
    switch (message.getType()) {
      case 'system':
        return [{ role: 'system', content }];
      case 'human':
        return [{ role: 'user', content }];
      case 'tool':
        return [{ role: 'tool', content, tool_call_id: (message as ToolMessage).tool_call_id }];
      case 'ai': {
        const ai = message as AIMessage;
        const toolCalls = (ai.tool_calls ?? []).map((call) =>
          toolCall(call.id ?? '', call.name, calls.argumentsOf(call.id ?? '', call.args)),
        );
        const reasoning = ai.additional_kwargs['reasoning_content'];
        return [
          {
            role: 'assistant',
            content: content.length > 0 ? content : null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            ...(typeof reasoning === 'string' ? { reasoning_content: reasoning } : {}),
          },
        ];
      }
      default:
        return [{ role: 'user', content }];
    }
  };

  const countMessage = (message: BaseMessage): number => {
    const id = message.id;
    if (id !== undefined) {
      const cached = countsById.get(id);
      if (cached !== undefined) return cached;
    }
    let total = 0;
    for (const chat of toChatOne(message)) total += countChat(chat);
    if (id !== undefined) countsById.set(id, total);
    return total;
  };

  return {
    name: 'LangChain trimMessages',
    version: `@langchain/core ${versionOf('@langchain/core')}`,
    setup:
      "strategy 'last', startOn 'human', includeSystem true, allowPartial false; tokenCounter = sum of per-message " +
      'gpt-tokenizer o200k counts (same count as ours), cached by message id across calls',
    toNative(messages) {
      return messages.map((message): BaseMessage => {
        const id = `lc-${nextId++}`;
        const content = message.content ?? '';
        switch (message.role) {
          case 'system':
          case 'developer':
            return new SystemMessage({ content, id });
          case 'user':
            return new HumanMessage({ content, id });
          case 'tool':
            return new ToolMessage({ content, id, tool_call_id: message.tool_call_id ?? '' });
          case 'assistant': {
            for (const call of message.tool_calls ?? []) calls.remember(call);
            return new AIMessage({
              content,
              id,
              tool_calls: (message.tool_calls ?? []).map((call) => ({
                id: call.id,
                name: call.function.name,
                args: parseArguments(call.function.arguments),
                type: 'tool_call' as const,
              })),
              additional_kwargs:
                message.reasoning_content !== undefined ? { reasoning_content: message.reasoning_content } : {},
            });
          }
        }
      });
    },
    async trim(history, maxTokens) {
      return trimMessages([...history], {
        maxTokens,
        strategy: 'last',
        startOn: 'human',
        includeSystem: true,
        tokenCounter: (messages: BaseMessage[]) => {
          let total = 0;
          for (const message of messages) total += countMessage(message);
          return total;
        },
      });
    },
    toChat(messages) {
      return messages.flatMap((message) => (message === undefined || message === null ? [] : toChatOne(message)));
    },
  };
};

// ---------------------------------------------------------------- Vercel AI SDK

const aiPruneOptions = {
  reasoning: 'before-last-message',
  toolCalls: 'before-last-2-messages',
  emptyMessages: 'remove',
} as const;

const createAiSdk = ({ countChat }: PeerOptions): PeerTrimmer<ModelMessage> => {
  const calls = new ToolCallTable();
  // pruneMessages returns the same object for every message it leaves alone, so an identity cache stays warm.
  const counts = new WeakMap<ModelMessage, number>();

  const toChatOne = (message: ModelMessage): ChatMessage[] => {
    switch (message.role) {
      case 'system':
        return [{ role: 'system', content: message.content }];
      case 'user':
        return [
          {
            role: 'user',
            content:
              typeof message.content === 'string'
                ? message.content
                : message.content.map((part) => (part.type === 'text' ? part.text : '')).join(''),
          },
        ];
      case 'assistant': {
        if (typeof message.content === 'string') return [{ role: 'assistant', content: message.content }];
        let text = '';
        let reasoning: string | undefined;
        const toolCalls: ChatToolCall[] = [];
        for (const part of message.content) {
          if (part.type === 'text') text += part.text;
          else if (part.type === 'reasoning') reasoning = (reasoning ?? '') + part.text;
          else if (part.type === 'tool-call')
            toolCalls.push(toolCall(part.toolCallId, part.toolName, calls.argumentsOf(part.toolCallId, part.input)));
        }
        return [
          {
            role: 'assistant',
            content: text.length > 0 ? text : null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            ...(reasoning !== undefined ? { reasoning_content: reasoning } : {}),
          },
        ];
      }
      case 'tool':
        return message.content.flatMap((part): ChatMessage[] =>
          part.type === 'tool-result'
            ? [
                {
                  role: 'tool',
                  tool_call_id: part.toolCallId,
                  content: part.output.type === 'text' ? part.output.value : JSON.stringify(part.output),
                },
              ]
            : [],
        );
    }
  };

  const countMessage = (message: ModelMessage): number => {
    const cached = counts.get(message);
    if (cached !== undefined) return cached;
    let total = 0;
    for (const chat of toChatOne(message)) total += countChat(chat);
    counts.set(message, total);
    return total;
  };

  return {
    name: 'ai pruneMessages + cut',
    version: `ai ${versionOf('ai')}`,
    setup:
      `pruneMessages(${JSON.stringify(aiPruneOptions)}) (the documented example), then our own newest-first cut ` +
      'that keeps the system message and stops at the first message that does not fit; same o200k per-message ' +
      'counts as ours, cached by message identity',
    toNative(messages) {
      return messages.map((message): ModelMessage => {
        const content = message.content ?? '';
        switch (message.role) {
          case 'system':
          case 'developer':
            return { role: 'system', content };
          case 'user':
            return { role: 'user', content };
          case 'tool':
            return {
              role: 'tool',
              content: [
                {
                  type: 'tool-result',
                  toolCallId: message.tool_call_id ?? '',
                  toolName: calls.nameOf(message.tool_call_id ?? ''),
                  output: { type: 'text', value: content },
                },
              ],
            };
          case 'assistant': {
            for (const call of message.tool_calls ?? []) calls.remember(call);
            return {
              role: 'assistant',
              content: [
                ...(message.reasoning_content !== undefined
                  ? [{ type: 'reasoning' as const, text: message.reasoning_content }]
                  : []),
                ...(content.length > 0 ? [{ type: 'text' as const, text: content }] : []),
                ...(message.tool_calls ?? []).map((call) => ({
                  type: 'tool-call' as const,
                  toolCallId: call.id,
                  toolName: call.function.name,
                  input: parseArguments(call.function.arguments),
                })),
              ],
            };
          }
        }
      });
    },
    async trim(history, maxTokens) {
      const pruned = pruneMessages({ messages: [...history], ...aiPruneOptions });
      const system = pruned[0]?.role === 'system' ? pruned[0] : undefined;
      const start = system ? 1 : 0;
      let used = system ? countMessage(system) : 0;
      let cut = pruned.length;
      while (cut > start) {
        const next = countMessage(pruned[cut - 1]!);
        if (used + next > maxTokens) break;
        used += next;
        cut -= 1;
      }
      return system ? [system, ...pruned.slice(cut)] : pruned.slice(cut);
    },
    toChat(messages) {
      return messages.flatMap((message) => (message === undefined || message === null ? [] : toChatOne(message)));
    },
  };
};

// ---------------------------------------------------------------- Mastra

const createMastra = (): PeerTrimmer<CoreMessage> => {
  const calls = new ToolCallTable();
  const limiters = new Map<number, TokenLimiter>();
  // Building a limiter parses the o200k ranks (hundreds of ms); one per budget, built before timing starts.
  const limiterFor = (maxTokens: number): TokenLimiter => {
    let limiter = limiters.get(maxTokens);
    if (!limiter) {
      limiter = new TokenLimiter(maxTokens);
      limiters.set(maxTokens, limiter);
    }
    return limiter;
  };

  const toChatOne = (message: CoreMessage): ChatMessage[] => {
    switch (message.role) {
      case 'system':
        return [{ role: 'system', content: message.content }];
      case 'user':
        return [
          {
            role: 'user',
            content:
              typeof message.content === 'string'
                ? message.content
                : message.content.map((part) => (part.type === 'text' ? part.text : '')).join(''),
          },
        ];
      case 'assistant': {
        if (typeof message.content === 'string') return [{ role: 'assistant', content: message.content }];
        let text = '';
        let reasoning: string | undefined;
        const toolCalls: ChatToolCall[] = [];
        for (const part of message.content) {
          if (part.type === 'text') text += part.text;
          else if (part.type === 'reasoning') reasoning = (reasoning ?? '') + part.text;
          else if (part.type === 'tool-call')
            toolCalls.push(toolCall(part.toolCallId, part.toolName, calls.argumentsOf(part.toolCallId, part.args)));
        }
        return [
          {
            role: 'assistant',
            content: text.length > 0 ? text : null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            ...(reasoning !== undefined ? { reasoning_content: reasoning } : {}),
          },
        ];
      }
      case 'tool':
        return message.content.map(
          (part): ChatMessage => ({
            role: 'tool',
            tool_call_id: part.toolCallId,
            content: typeof part.result === 'string' ? part.result : JSON.stringify(part.result),
          }),
        );
    }
  };

  return {
    name: 'Mastra TokenLimiter',
    version: `@mastra/memory ${versionOf('@mastra/memory')} (+ @mastra/core ${versionOf('@mastra/core')})`,
    setup:
      'new TokenLimiter(maxTokens).process(history, { systemMessage }) with its own js-tiktoken o200k counts ' +
      '(no cache); the system message is passed apart, as Mastra does, and put back in front',
    toNative(messages) {
      return messages.map((message): CoreMessage => {
        const content = message.content ?? '';
        switch (message.role) {
          case 'system':
          case 'developer':
            return { role: 'system', content };
          case 'user':
            return { role: 'user', content };
          case 'tool':
            return {
              role: 'tool',
              content: [
                {
                  type: 'tool-result',
                  toolCallId: message.tool_call_id ?? '',
                  toolName: calls.nameOf(message.tool_call_id ?? ''),
                  result: content,
                },
              ],
            };
          case 'assistant': {
            for (const call of message.tool_calls ?? []) calls.remember(call);
            if (!message.tool_calls?.length && message.reasoning_content === undefined) {
              return { role: 'assistant', content };
            }
            return {
              role: 'assistant',
              content: [
                ...(message.reasoning_content !== undefined
                  ? [{ type: 'reasoning' as const, text: message.reasoning_content }]
                  : []),
                ...(content.length > 0 ? [{ type: 'text' as const, text: content }] : []),
                ...(message.tool_calls ?? []).map((call) => ({
                  type: 'tool-call' as const,
                  toolCallId: call.id,
                  toolName: call.function.name,
                  args: parseArguments(call.function.arguments),
                })),
              ],
            };
          }
        }
      });
    },
    async trim(history, maxTokens) {
      const limiter = limiterFor(maxTokens);
      const first = history[0];
      if (first?.role === 'system') {
        const kept = limiter.process(history.slice(1), { systemMessage: first.content });
        return [first, ...kept];
      }
      return limiter.process([...history]);
    },
    toChat(messages) {
      return messages.flatMap((message) => (message === undefined || message === null ? [] : toChatOne(message)));
    },
  };
};

/** Builds the three peers; called by `loadPeers` in ensure.ts after the peers are installed. */
export const createPeers = async (options: PeerOptions): Promise<PeerLibraries> => ({
  langchain: createLangChain(options) as PeerTrimmer<unknown>,
  aiSdk: createAiSdk(options) as PeerTrimmer<unknown>,
  mastra: createMastra() as PeerTrimmer<unknown>,
});

