// The AI SDK's own convertToModelMessages cases, ported: each case builds the UI messages and calls the peer's function.
// Source: vercel/ai, packages/ai/src/ui/convert-to-model-messages.test.ts at commit b8e4215ea7ddf4cca6551bdadfada8f1bbadd8cf
// (the tip of branch release-v6.0, ai 6.0.264: the newest v6 source the mirror holds; the installed ai is 6.0.326, whose
// convertToModelMessages adds unavailable-tool outputs and result provider metadata for output errors). `line` is the case's
// line in that file; the expected outputs are not copied: the test compares with what the installed peer returns.
import { readUIMessageStream, tool, type convertToModelMessages as peerConvert, type ModelMessage, type UIMessage, type UIMessageChunk } from 'ai';
import { z } from 'zod';

/** The peer's test helper, over the public `readUIMessageStream`: the last state of the assistant message the chunks stream. */
async function recordAssistantMessageFromChunks<UI_MESSAGE extends UIMessage = UIMessage>(chunks: UIMessageChunk[]): Promise<UI_MESSAGE> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UI_MESSAGE | undefined;
  for await (const message of readUIMessageStream<UI_MESSAGE>({ stream })) last = message;
  if (!last) throw new Error('the chunks streamed no message');
  return last;
}

/** The installed peer's function. */
export type ConvertToModelMessages = typeof peerConvert;

export interface ConvertCase {
  readonly name: string;
  readonly line: number;
  run(convertToModelMessages: ConvertToModelMessages): Promise<ModelMessage[]>;
}

export const convertToModelMessagesCases: readonly ConvertCase[] = [
  {
    name: "system message > should convert a simple system message",
    line: 42,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'system',
          parts: [{ text: 'System message', type: 'text' }],
        },
      ]);
      return result;
    },
  },
  {
    name: "system message > should convert a system message with provider metadata",
    line: 53,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'system',
          parts: [
            {
              text: 'System message with metadata',
              type: 'text',
              providerMetadata: { testProvider: { systemSignature: 'abc123' } },
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "system message > should merge provider metadata from multiple text parts in system message",
    line: 76,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'system',
          parts: [
            {
              text: 'Part 1',
              type: 'text',
              providerMetadata: { provider1: { key1: 'value1' } },
            },
            {
              text: ' Part 2',
              type: 'text',
              providerMetadata: { provider2: { key2: 'value2' } },
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "system message > should convert a system message with Anthropic cache control metadata",
    line: 107,
    run: async (convertToModelMessages) => {
      const SYSTEM_PROMPT = 'You are a helpful assistant.';
      const systemMessage = {
        id: 'system',
        role: 'system' as const,
        parts: [
          {
            type: 'text' as const,
            text: SYSTEM_PROMPT,
            providerMetadata: {
              anthropic: {
                cacheControl: { type: 'ephemeral' },
              },
            },
          },
        ],
      };
      const result = await convertToModelMessages([systemMessage]);
      return result;
    },
  },
  {
    name: "user message > should convert a simple user message",
    line: 143,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'user',
          parts: [{ text: 'Hello, AI!', type: 'text' }],
        },
      ]);
      return result;
    },
  },
  {
    name: "user message > should convert a simple user message with provider metadata",
    line: 166,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'user',
          parts: [
            {
              text: 'Hello, AI!',
              type: 'text',
              providerMetadata: { testProvider: { signature: '1234567890' } },
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "user message > should handle user message file parts",
    line: 200,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'user',
          parts: [
            {
              type: 'file',
              mediaType: 'image/jpeg',
              url: 'https://example.com/image.jpg',
            },
            { type: 'text', text: 'Check this image' },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "user message > should handle user message file parts with provider metadata",
    line: 230,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'user',
          parts: [
            {
              type: 'file',
              mediaType: 'image/jpeg',
              url: 'https://example.com/image.jpg',
              providerMetadata: { testProvider: { signature: '1234567890' } },
            },
            { type: 'text', text: 'Check this image' },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "user message > should include filename for user file parts when provided",
    line: 262,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'user',
          parts: [
            {
              type: 'file',
              mediaType: 'image/jpeg',
              url: 'https://example.com/image.jpg',
              filename: 'image.jpg',
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "should not include filename for user file parts when not provided",
    line: 293,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
      {
        role: 'user',
        parts: [
          {
            type: 'file',
            mediaType: 'image/jpeg',
            url: 'https://example.com/image.jpg',
          },
        ],
      },
          ]);
      return result;
    },
  },
  {
    name: "assistant message > should convert a simple assistant text message",
    line: 322,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [{ type: 'text', text: 'Hello, human!', state: 'done' }],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should convert a simple assistant text message with provider metadata",
    line: 338,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            {
              type: 'text',
              text: 'Hello, human!',
              state: 'done',
              providerMetadata: { testProvider: { signature: '1234567890' } },
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should convert an assistant message with reasoning",
    line: 373,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            {
              type: 'reasoning',
              text: 'Thinking...',
              providerMetadata: {
                testProvider: {
                  signature: '1234567890',
                },
              },
              state: 'done',
            },
            {
              type: 'reasoning',
              text: 'redacted-data',
              providerMetadata: {
                testProvider: { isRedacted: true },
              },
              state: 'done',
            },
            { type: 'text', text: 'Hello, human!', state: 'done' },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should convert an assistant message with file parts",
    line: 421,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            {
              type: 'file',
              mediaType: 'image/png',
              url: 'data:image/png;base64,dGVzdA==',
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should include filename for assistant file parts when provided",
    line: 449,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            {
              type: 'file',
              mediaType: 'image/png',
              url: 'data:image/png;base64,dGVzdA==',
              filename: 'test.png',
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should handle assistant message file parts with provider metadata",
    line: 479,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            {
              type: 'file',
              mediaType: 'image/png',
              url: 'data:image/png;base64,dGVzdA==',
              providerMetadata: {
                testProvider: { signature: 'test-signature' },
              },
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should handle assistant message with tool output available",
    line: 513,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            { type: 'step-start' },
            {
              type: 'text',
              text: 'Let me calculate that for you.',
              state: 'done',
            },
            {
              type: 'tool-calculator',
              state: 'output-available',
              toolCallId: 'call1',
              input: { operation: 'add', numbers: [1, 2] },
              output: '3',
              callProviderMetadata: {
                testProvider: {
                  signature: '1234567890',
                },
              },
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > tool output error > should handle assistant message with tool output error that has raw input",
    line: 593,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
          {
            role: 'assistant',
            parts: [
              { type: 'step-start' },
              {
                type: 'text',
                text: 'Let me calculate that for you.',
                state: 'done',
              },
              {
                type: 'tool-calculator',
                state: 'output-error',
                toolCallId: 'call1',
                errorText: 'Error: Invalid input',
                input: undefined,
                rawInput: { operation: 'add', numbers: [1, 2] },
              },
            ],
          },
        ]);
      return result;
    },
  },
  {
    name: "assistant message > tool output error > should handle assistant message with tool output error that has no raw input",
    line: 658,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
          {
            role: 'assistant',
            parts: [
              { type: 'step-start' },
              {
                type: 'text',
                text: 'Let me calculate that for you.',
                state: 'done',
              },
              {
                type: 'tool-calculator',
                state: 'output-error',
                toolCallId: 'call1',
                input: { operation: 'add', numbers: [1, 2] },
                errorText: 'Error: Invalid input',
              },
            ],
          },
        ]);
      return result;
    },
  },
  {
    name: "assistant message > should handle assistant message with provider-executed tool output available",
    line: 723,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            { type: 'step-start' },
            {
              type: 'text',
              text: 'Let me calculate that for you.',
              state: 'done',
            },
            {
              type: 'tool-calculator',
              state: 'output-available',
              toolCallId: 'call1',
              input: { operation: 'add', numbers: [1, 2] },
              output: '3',
              providerExecuted: true,
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should handle assistant message with provider-executed tool output error",
    line: 783,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            { type: 'step-start' },
            {
              type: 'text',
              text: 'Let me calculate that for you.',
              state: 'done',
            },
            {
              type: 'tool-calculator',
              state: 'output-error',
              toolCallId: 'call1',
              input: { operation: 'add', numbers: [1, 2] },
              errorText: 'Error: Invalid input',
              providerExecuted: true,
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should propagate provider metadata to provider-executed tool-result",
    line: 843,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            { type: 'step-start' },
            {
              type: 'tool-calculator',
              state: 'output-available',
              toolCallId: 'call1',
              input: { operation: 'multiply', numbers: [3, 4] },
              output: '12',
              providerExecuted: true,
              callProviderMetadata: {
                testProvider: {
                  executionTime: 75,
                },
              },
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should prefer result provider metadata over call provider metadata for provider-executed tool-result",
    line: 909,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            { type: 'step-start' },
            {
              type: 'tool-calculator',
              state: 'output-available',
              toolCallId: 'call1',
              input: { operation: 'multiply', numbers: [3, 4] },
              output: '12',
              providerExecuted: true,
              callProviderMetadata: {
                testProvider: {
                  itemId: 'call-item',
                },
              },
              resultProviderMetadata: {
                testProvider: {
                  itemId: 'result-item',
                },
              },
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should handle assistant message with tool invocations that have multi-part responses",
    line: 975,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            { type: 'step-start' },
            {
              type: 'text',
              text: 'Let me calculate that for you.',
              state: 'done',
            },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call1',
              input: {},
              output: 'imgbase64',
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should handle conversation with an assistant message that has empty tool invocations",
    line: 1000,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'user',
          parts: [{ type: 'text', text: 'text1' }],
        },
        {
          role: 'assistant',
          parts: [{ type: 'text', text: 'text2', state: 'done' }],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should handle conversation with multiple tool invocations that have step information",
    line: 1015,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            { type: 'step-start' },
            { type: 'text', text: 'response', state: 'done' },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call-1',
              input: { value: 'value-1' },
              output: 'result-1',
            },
            { type: 'step-start' },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call-2',
              input: { value: 'value-2' },
              output: 'result-2',
            },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call-3',
              input: { value: 'value-3' },
              output: 'result-3',
            },
            { type: 'step-start' },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call-4',
              input: { value: 'value-4' },
              output: 'result-4',
            },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "assistant message > should handle conversation with mix of tool invocations and text",
    line: 1059,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            { type: 'step-start' },
            { type: 'text', text: 'i am gonna use tool1', state: 'done' },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call-1',
              input: { value: 'value-1' },
              output: 'result-1',
            },
            { type: 'step-start' },
            {
              type: 'text',
              text: 'i am gonna use tool2 and tool3',
              state: 'done',
            },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call-2',
              input: { value: 'value-2' },
              output: 'result-2',
            },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call-3',
              input: { value: 'value-3' },
              output: 'result-3',
            },
            { type: 'step-start' },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call-4',
              input: { value: 'value-4' },
              output: 'result-4',
            },
            { type: 'step-start' },
            { type: 'text', text: 'final response', state: 'done' },
          ],
        },
      ]);
      return result;
    },
  },
  {
    name: "multiple messages > should handle a conversation with multiple messages",
    line: 1112,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'user',
          parts: [{ type: 'text', text: "What's the weather like?" }],
        },
        {
          role: 'assistant',
          parts: [
            { type: 'text', text: "I'll check that for you.", state: 'done' },
          ],
        },
        {
          role: 'user',
          parts: [{ type: 'text', text: 'Thanks!' }],
        },
      ]);
      return result;
    },
  },
  {
    name: "multiple messages > should handle conversation with multiple tool invocations and user message at the end",
    line: 1163,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          role: 'assistant',
          parts: [
            { type: 'step-start' },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call-1',
              input: { value: 'value-1' },
              output: 'result-1',
            },
            { type: 'step-start' },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call-2',
              input: { value: 'value-2' },
              output: 'result-2',
            },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call-3',
              input: { value: 'value-3' },
              output: 'result-3',
            },
            { type: 'step-start' },
            {
              type: 'tool-screenshot',
              state: 'output-available',
              toolCallId: 'call-4',
              input: { value: 'value-4' },
              output: 'result-4',
            },
            { type: 'step-start' },
            { type: 'text', text: 'response', state: 'done' },
          ],
        },
        {
          role: 'user',
          parts: [{ type: 'text', text: 'Thanks!' }],
        },
      ]);
      return result;
    },
  },
  {
    name: "when ignoring incomplete tool calls > should ignore preliminary tool outputs",
    line: 1227,
    run: async (convertToModelMessages) => {
      let toModelOutputCalls = 0;
      const result = await convertToModelMessages(
        [
          {
            role: 'assistant',
            parts: [
              {
                type: 'tool-streamingTool',
                state: 'output-available',
                toolCallId: 'call-preliminary',
                input: { task: 'finish the work' },
                output: { complete: false, progress: 'half finished' },
                preliminary: true,
              },
            ],
          },
          {
            role: 'user',
            parts: [{ type: 'text', text: 'Continue.' }],
          },
        ],
        {
          ignoreIncompleteToolCalls: true,
          tools: {
            streamingTool: tool({
              inputSchema: z.object({ task: z.string() }),
              toModelOutput: ({ output }) => {
                toModelOutputCalls++;
                return { type: 'json', value: output };
              },
            }),
          },
        },
      );
      return result;
    },
  },
  {
    name: "when ignoring incomplete tool calls > should ignore tool calls that are awaiting approval or have no state",
    line: 1273,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages(
        [
          {
            role: 'assistant',
            parts: [
              {
                type: 'text',
                text: 'Waiting for completed tool calls.',
                state: 'done',
              },
              {
                type: 'tool-weather',
                state: 'approval-requested',
                toolCallId: 'call-awaiting-approval',
                input: { city: 'Tokyo' },
                approval: { id: 'approval-1' },
              },
              {
                type: 'tool-weather',
                toolCallId: 'call-without-state',
                input: { city: 'Berlin' },
              } as any,
            ],
          },
          {
            role: 'user',
            parts: [{ type: 'text', text: 'Continue.' }],
          },
        ],
        { ignoreIncompleteToolCalls: true },
      );
      return result;
    },
  },
  {
    name: "when ignoring incomplete tool calls > should preserve tool calls with approval responses",
    line: 1323,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages(
        [
          {
            role: 'assistant',
            parts: [
              {
                type: 'tool-weather',
                state: 'approval-responded',
                toolCallId: 'call-approved',
                input: { city: 'Tokyo' },
                approval: { id: 'approval-1', approved: true },
              },
            ],
          },
        ],
        { ignoreIncompleteToolCalls: true },
      );
      return result;
    },
  },
  {
    name: "when ignoring incomplete tool calls > should handle conversation with multiple tool invocations and user message at the end",
    line: 1375,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages(
        [
          {
            role: 'assistant',
            parts: [
              { type: 'step-start' },
              {
                type: 'tool-screenshot',
                state: 'output-available',
                toolCallId: 'call-1',
                input: { value: 'value-1' },
                output: 'result-1',
              },
              { type: 'step-start' },
              {
                type: 'tool-screenshot',
                state: 'input-streaming',
                toolCallId: 'call-2',
                input: { value: 'value-2' },
              },
              {
                type: 'tool-screenshot',
                state: 'input-available',
                toolCallId: 'call-3',
                input: { value: 'value-3' },
              },
              {
                type: 'dynamic-tool',
                toolName: 'tool-screenshot2',
                state: 'input-available',
                toolCallId: 'call-3',
                input: { value: 'value-3' },
              },
              { type: 'text', text: 'response', state: 'done' },
            ],
          },
          {
            role: 'user',
            parts: [{ type: 'text', text: 'Thanks!' }],
          },
        ],
        { ignoreIncompleteToolCalls: true },
      );
      return result;
    },
  },
  {
    name: "when converting dynamic tool invocations > should convert a dynamic tool invocation",
    line: 1474,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages(
        [
          {
            role: 'assistant',
            parts: [
              { type: 'step-start' },
              {
                type: 'dynamic-tool',
                toolName: 'screenshot',
                state: 'output-available',
                toolCallId: 'call-1',
                input: { value: 'value-1' },
                output: 'result-1',
              },
            ],
          },
          {
            role: 'user',
            parts: [{ type: 'text', text: 'Thanks!' }],
          },
        ],
        { ignoreIncompleteToolCalls: true },
      );
      return result;
    },
  },
  {
    name: "when converting provider-executed dynamic tool invocations > should convert a provider-executed dynamic tool invocation",
    line: 1544,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages(
        [
          {
            role: 'assistant',
            parts: [
              { type: 'step-start' },
              {
                type: 'dynamic-tool',
                toolName: 'screenshot',
                state: 'output-available',
                toolCallId: 'call-1',
                input: { value: 'value-1' },
                output: 'result-1',
                providerExecuted: true,
                callProviderMetadata: {
                  'test-provider': {
                    'key-a': 'test-value-1',
                    'key-b': 'test-value-2',
                  },
                },
              },
            ],
          },
          {
            role: 'user',
            parts: [{ type: 'text', text: 'Thanks!' }],
          },
        ],
        { ignoreIncompleteToolCalls: true },
      );
      return result;
    },
  },
  {
    name: "when converting tool approval request responses > should convert an approved tool approval request (static tool)",
    line: 1628,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          parts: [
            {
              text: 'What is the weather in Tokyo?',
              type: 'text',
            },
          ],
          role: 'user',
        },
        {
          parts: [
            {
              type: 'step-start',
            },
            {
              // @ts-expect-error the peer's case sets reason: undefined, which this repository's exactOptionalPropertyTypes refuses
              approval: {
                approved: true,
                id: 'approval-1',
                reason: undefined,
              },
              input: {
                city: 'Tokyo',
              },
              state: 'approval-responded',
              toolCallId: 'call-1',
              type: 'tool-weather',
            },
          ],
          role: 'assistant',
        },
      ]);
      return result;
    },
  },
  {
    name: "when converting tool approval request responses > should convert an approved tool approval request (dynamic tool)",
    line: 1708,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          parts: [
            {
              text: 'What is the weather in Tokyo?',
              type: 'text',
            },
          ],
          role: 'user',
        },
        {
          parts: [
            {
              type: 'step-start',
            },
            {
              // @ts-expect-error the peer's case sets reason: undefined, which this repository's exactOptionalPropertyTypes refuses
              approval: {
                approved: true,
                id: 'approval-1',
                reason: undefined,
              },
              input: {
                city: 'Tokyo',
              },
              state: 'approval-responded',
              toolCallId: 'call-1',
              type: 'dynamic-tool',
              toolName: 'weather',
            },
          ],
          role: 'assistant',
        },
      ]);
      return result;
    },
  },
  {
    name: "when converting tool approval request responses > should convert a denied tool approval request and follow up text (static tool)",
    line: 1789,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          parts: [
            {
              text: 'What is the weather in Tokyo?',
              type: 'text',
            },
          ],
          role: 'user',
        },
        {
          parts: [
            {
              type: 'step-start',
            },
            {
              approval: {
                approved: false,
                id: 'approval-1',
                reason: "I don't want to approve this",
              },
              input: {
                city: 'Tokyo',
              },
              state: 'approval-responded',
              toolCallId: 'call-1',
              type: 'tool-weather',
            },
            { type: 'step-start' },
            {
              type: 'text',
              text: 'I was not able to retrieve the weather.',
              state: 'done',
            },
          ],
          role: 'assistant',
        },
      ]);
      return result;
    },
  },
  {
    name: "when converting tool approval request responses > should convert a denied tool approval request and follow up text (dynamic tool)",
    line: 1884,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          parts: [
            {
              text: 'What is the weather in Tokyo?',
              type: 'text',
            },
          ],
          role: 'user',
        },
        {
          parts: [
            {
              type: 'step-start',
            },
            {
              approval: {
                approved: false,
                id: 'approval-1',
                reason: "I don't want to approve this",
              },
              input: {
                city: 'Tokyo',
              },
              state: 'approval-responded',
              toolCallId: 'call-1',
              type: 'dynamic-tool',
              toolName: 'weather',
            },
            { type: 'step-start' },
            {
              type: 'text',
              text: 'I was not able to retrieve the weather.',
              state: 'done',
            },
          ],
          role: 'assistant',
        },
      ]);
      return result;
    },
  },
  {
    name: "when converting tool approval request responses > should convert tool output denied (static tool)",
    line: 1980,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          parts: [
            {
              text: 'What is the weather in Tokyo?',
              type: 'text',
            },
          ],
          role: 'user',
        },
        {
          parts: [
            {
              type: 'step-start',
            },
            {
              approval: {
                approved: false,
                id: 'approval-1',
                reason: "I don't want to approve this",
              },
              input: {
                city: 'Tokyo',
              },
              state: 'output-denied',
              toolCallId: 'call-1',
              type: 'tool-weather',
            },
          ],
          role: 'assistant',
        },
      ]);
      return result;
    },
  },
  {
    name: "when converting tool approval request responses > should convert tool output denied without approval (static tool)",
    line: 2069,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          parts: [
            {
              text: 'What is the weather in Tokyo?',
              type: 'text',
            },
          ],
          role: 'user',
        },
        {
          role: 'assistant',
          parts: [
            {
              input: {
                city: 'Tokyo',
              },
              state: 'output-denied',
              toolCallId: 'call-1',
              type: 'tool-weather',
            },
          ],
        },
      ] as unknown as UIMessage[]);
      return result;
    },
  },
  {
    name: "when converting tool approval request responses > should convert tool output denied (dynamic tool)",
    line: 2138,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          parts: [
            {
              text: 'What is the weather in Tokyo?',
              type: 'text',
            },
          ],
          role: 'user',
        },
        {
          parts: [
            {
              type: 'step-start',
            },
            {
              approval: {
                approved: false,
                id: 'approval-1',
                reason: "I don't want to approve this",
              },
              input: {
                city: 'Tokyo',
              },
              state: 'output-denied',
              toolCallId: 'call-1',
              type: 'dynamic-tool',
              toolName: 'weather',
            },
          ],
          role: 'assistant',
        },
      ]);
      return result;
    },
  },
  {
    name: "when converting tool approval request responses > should convert tool output result with approval and follow up text (static tool)",
    line: 2228,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          parts: [
            {
              text: 'What is the weather in Tokyo?',
              type: 'text',
            },
          ],
          role: 'user',
        },
        {
          parts: [
            { type: 'step-start' },
            {
              approval: {
                approved: true,
                id: 'approval-1',
              },
              input: {
                city: 'Tokyo',
              },
              output: {
                weather: 'Sunny',
                temperature: '20°C',
              },
              state: 'output-available',
              toolCallId: 'call-1',
              type: 'tool-weather',
            },
            { type: 'step-start' },
            {
              type: 'text',
              text: 'The weather in Tokyo is sunny.',
              state: 'done',
            },
          ],
          role: 'assistant',
        },
      ]);
      return result;
    },
  },
  {
    name: "when converting tool approval request responses > should convert tool error result with approval and follow up text (static tool)",
    line: 2336,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
        {
          parts: [
            {
              text: 'What is the weather in Tokyo?',
              type: 'text',
            },
          ],
          role: 'user',
        },
        {
          parts: [
            { type: 'step-start' },
            {
              approval: {
                approved: true,
                id: 'approval-1',
              },
              input: {
                city: 'Tokyo',
              },
              errorText: 'Error: Fetching weather data failed',
              state: 'output-error',
              toolCallId: 'call-1',
              type: 'tool-weather',
            },
            { type: 'step-start' },
            {
              type: 'text',
              text: 'The weather in Tokyo is sunny.',
              state: 'done',
            },
          ],
          role: 'assistant',
        },
      ]);
      return result;
    },
  },
  {
    name: "data part conversion > in user messages > should convert data parts to text when converter provided",
    line: 2441,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages<
          UIMessage<unknown, { url: { url: string; content: string } }>
        >(
          [
            {
              role: 'user',
              parts: [
                {
                  type: 'data-url',
                  data: { url: 'https://example.com', content: 'Article text' },
                },
              ],
            },
          ],
          {
            convertDataPart: part => ({
              type: 'text',
              text: `\n\n[${part.data.url}]\n${part.data.content}`,
            }),
          },
        );
      return result;
    },
  },
  {
    name: "data part conversion > in user messages > should skip data parts when no converter provided",
    line: 2482,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
          {
            role: 'user',
            parts: [
              { type: 'text', text: 'Hello' },
              { type: 'data-url', data: { url: 'https://example.com' } },
            ],
          },
        ]);
      return result;
    },
  },
  {
    name: "data part conversion > in user messages > should selectively convert data parts",
    line: 2508,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages<
          UIMessage<
            unknown,
            {
              url: { url: string };
              'ui-state': { enabled: boolean };
            }
          >
        >(
          [
            {
              role: 'user',
              parts: [
                { type: 'data-url', data: { url: 'https://example.com' } },
                { type: 'data-ui-state', data: { enabled: true } },
              ],
            },
          ],
          {
            convertDataPart: part => {
              // Include URLs, skip UI state
              if (part.type === 'data-url') {
                return { type: 'text', text: part.data.url };
              }
            },
          },
        );
      return result;
    },
  },
  {
    name: "data part conversion > in user messages > should convert data parts to file parts",
    line: 2552,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages<
          UIMessage<
            unknown,
            {
              attachment: { mediaType: string; filename: string; data: string };
            }
          >
        >(
          [
            {
              role: 'user',
              parts: [
                { type: 'text', text: 'Check this file' },
                {
                  type: 'data-attachment',
                  data: {
                    mediaType: 'application/pdf',
                    filename: 'document.pdf',
                    data: 'base64data',
                  },
                },
              ],
            },
          ],
          {
            convertDataPart: part => {
              if (part.type === 'data-attachment') {
                return {
                  type: 'file',
                  mediaType: part.data.mediaType,
                  filename: part.data.filename,
                  data: part.data.data,
                };
              }
            },
          },
        );
      return result;
    },
  },
  {
    name: "data part conversion > in user messages > should handle multiple data parts of different types",
    line: 2612,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages<
          UIMessage<
            never,
            {
              url: { url: string; title: string };
              code: { code: string; language: string };
              note: { text: string };
            }
          >
        >(
          [
            {
              role: 'user',
              parts: [
                { type: 'text', text: 'Review these:' },
                {
                  type: 'data-url',
                  data: { url: 'https://example.com', title: 'Example' },
                },
                {
                  type: 'data-code',
                  data: { code: 'console.log("test")', language: 'javascript' },
                },
                {
                  type: 'data-note',
                  data: { text: 'Internal note' },
                },
              ],
            },
          ],
          {
            convertDataPart: part => {
              switch (part.type) {
                case 'data-url':
                  return {
                    type: 'text',
                    text: `[${part.data.title}](${part.data.url})`,
                  };
                case 'data-code':
                  return {
                    type: 'text',
                    text: `\`\`\`${part.data.language}\n${part.data.code}\n\`\`\``,
                  };
              }
            },
          },
        );
      return result;
    },
  },
  {
    name: "data part conversion > in user messages > should work with messages that have no data parts",
    line: 2686,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages(
          [
            {
              role: 'user',
              parts: [
                { type: 'text', text: 'Hello' },
                {
                  type: 'file',
                  mediaType: 'image/png',
                  url: 'https://example.com/image.png',
                },
              ],
            },
          ],
          {
            convertDataPart: () => ({ type: 'text', text: 'converted' }),
          },
        );
      return result;
    },
  },
  {
    name: "data part conversion > in user messages > should preserve order of parts including converted data parts",
    line: 2727,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages<
          UIMessage<unknown, { tag: { value: string } }>
        >(
          [
            {
              role: 'user',
              parts: [
                { type: 'text', text: 'First' },
                { type: 'data-tag', data: { value: 'tag1' } },
                { type: 'text', text: 'Second' },
                { type: 'data-tag', data: { value: 'tag2' } },
                { type: 'text', text: 'Third' },
              ],
            },
          ],
          {
            convertDataPart: part => ({
              type: 'text',
              text: `[${part.data.value}]`,
            }),
          },
        );
      return result;
    },
  },
  {
    name: "data part conversion > in assistant messages > should convert data parts to text when converter provided",
    line: 2784,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages<
          UIMessage<unknown, { url: { url: string; content: string } }>
        >(
          [
            {
              role: 'assistant',
              parts: [
                {
                  type: 'data-url',
                  data: { url: 'https://example.com', content: 'Article text' },
                },
              ],
            },
          ],
          {
            convertDataPart: part => ({
              type: 'text',
              text: `\n\n[${part.data.url}]\n${part.data.content}`,
            }),
          },
        );
      return result;
    },
  },
  {
    name: "data part conversion > in assistant messages > should skip data parts when no converter provided",
    line: 2825,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages([
          {
            role: 'assistant',
            parts: [
              { type: 'text', text: 'Hello' },
              { type: 'data-url', data: { url: 'https://example.com' } },
            ],
          },
        ]);
      return result;
    },
  },
  {
    name: "data part conversion > in assistant messages > should not emit empty assistant message for persistent data written before model stream starts",
    line: 2851,
    run: async (convertToModelMessages) => {
      type WeatherUIMessage = UIMessage<
          unknown,
          {
            weather: {
              city: string;
              status: 'loading' | 'success';
              weather?: string;
            };
          }
        >;
      const recordedMessage =
          await recordAssistantMessageFromChunks<WeatherUIMessage>([
            { type: 'start', messageId: 'msg-123' },
            {
              type: 'data-weather',
              id: 'weather-1',
              data: { city: 'San Francisco', status: 'loading' },
            },
            { type: 'start-step' },
            { type: 'text-start', id: 'text-1' },
            { type: 'text-delta', id: 'text-1', delta: 'It is sunny.' },
            { type: 'text-end', id: 'text-1' },
            { type: 'finish-step' },
            { type: 'finish' },
          ]);
      // (the peer checks recordedMessage with an inline snapshot here)
      const result = await convertToModelMessages([recordedMessage]);
      return result;
    },
  },
  {
    name: "data part conversion > in assistant messages > should selectively convert data parts",
    line: 2923,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages<
          UIMessage<
            unknown,
            {
              url: { url: string };
              'ui-state': { enabled: boolean };
            }
          >
        >(
          [
            {
              role: 'assistant',
              parts: [
                { type: 'data-url', data: { url: 'https://example.com' } },
                { type: 'data-ui-state', data: { enabled: true } },
              ],
            },
          ],
          {
            convertDataPart: part => {
              // Include URLs, skip UI state
              if (part.type === 'data-url') {
                return { type: 'text', text: part.data.url };
              }
            },
          },
        );
      return result;
    },
  },
  {
    name: "data part conversion > in assistant messages > should convert data parts to file parts",
    line: 2967,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages<
          UIMessage<
            unknown,
            {
              attachment: { mediaType: string; filename: string; data: string };
            }
          >
        >(
          [
            {
              role: 'assistant',
              parts: [
                { type: 'text', text: 'Check this file' },
                {
                  type: 'data-attachment',
                  data: {
                    mediaType: 'application/pdf',
                    filename: 'document.pdf',
                    data: 'base64data',
                  },
                },
              ],
            },
          ],
          {
            convertDataPart: part => {
              if (part.type === 'data-attachment') {
                return {
                  type: 'file',
                  mediaType: part.data.mediaType,
                  filename: part.data.filename,
                  data: part.data.data,
                };
              }
            },
          },
        );
      return result;
    },
  },
  {
    name: "data part conversion > in assistant messages > should handle multiple data parts of different types",
    line: 3027,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages<
          UIMessage<
            never,
            {
              url: { url: string; title: string };
              code: { code: string; language: string };
              note: { text: string };
            }
          >
        >(
          [
            {
              role: 'assistant',
              parts: [
                { type: 'text', text: 'Review these:' },
                {
                  type: 'data-url',
                  data: { url: 'https://example.com', title: 'Example' },
                },
                {
                  type: 'data-code',
                  data: { code: 'console.log("test")', language: 'javascript' },
                },
                {
                  type: 'data-note',
                  data: { text: 'Internal note' },
                },
              ],
            },
          ],
          {
            convertDataPart: part => {
              switch (part.type) {
                case 'data-url':
                  return {
                    type: 'text',
                    text: `[${part.data.title}](${part.data.url})`,
                  };
                case 'data-code':
                  return {
                    type: 'text',
                    text: `\`\`\`${part.data.language}\n${part.data.code}\n\`\`\``,
                  };
              }
            },
          },
        );
      return result;
    },
  },
  {
    name: "data part conversion > in assistant messages > should work with messages that have no data parts",
    line: 3101,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages(
          [
            {
              role: 'assistant',
              parts: [
                { type: 'text', text: 'Hello' },
                {
                  type: 'file',
                  mediaType: 'image/png',
                  url: 'https://example.com/image.png',
                },
              ],
            },
          ],
          {
            convertDataPart: () => ({ type: 'text', text: 'converted' }),
          },
        );
      return result;
    },
  },
  {
    name: "data part conversion > in assistant messages > should preserve order of parts including converted data parts",
    line: 3142,
    run: async (convertToModelMessages) => {
      const result = await convertToModelMessages<
          UIMessage<unknown, { tag: { value: string } }>
        >(
          [
            {
              role: 'assistant',
              parts: [
                { type: 'text', text: 'First' },
                { type: 'data-tag', data: { value: 'tag1' } },
                { type: 'text', text: 'Second' },
                { type: 'data-tag', data: { value: 'tag2' } },
                { type: 'text', text: 'Third' },
              ],
            },
          ],
          {
            convertDataPart: part => ({
              type: 'text',
              text: `[${part.data.value}]`,
            }),
          },
        );
      return result;
    },
  },
];
