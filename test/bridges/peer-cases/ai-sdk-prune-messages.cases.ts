// The AI SDK's own pruneMessages cases, ported: the fixtures and each case's call, with the peer's functions passed in.
// Source: vercel/ai, packages/ai/src/generate-text/prune-messages.test.ts at commit b8e4215ea7ddf4cca6551bdadfada8f1bbadd8cf
// (the tip of branch release-v6.0, ai 6.0.264; the installed ai is 6.0.326, whose pruneMessages also keeps the call of a
// kept approval). `line` is the case's line in that file; the expected outputs are not copied: the test compares with
// what the installed peer returns.
import type { ModelMessage, convertToModelMessages as peerConvert, pruneMessages as peerPrune } from 'ai';

export interface PruneCase {
  readonly name: string;
  readonly line: number;
  run(pruneMessages: typeof peerPrune, convertToModelMessages: typeof peerConvert): Promise<ModelMessage[]>;
}

const messagesFixture1: ModelMessage[] = [
  {
    role: 'user',
    content: [{ type: 'text', text: 'Weather in Tokyo and Busan?' }],
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'reasoning',
        text: 'I need to get the weather in Tokyo and Busan.',
      },
      {
        type: 'tool-call',
        toolCallId: 'call-1',
        toolName: 'get-weather-tool-1',
        input: '{"city": "Tokyo"}',
      },
      {
        type: 'tool-call',
        toolCallId: 'call-2',
        toolName: 'get-weather-tool-2',
        input: '{"city": "Busan"}',
      },
      {
        type: 'tool-approval-request',
        toolCallId: 'call-2',
        approvalId: 'approval-1',
      },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-approval-response',
        approvalId: 'approval-1',
        approved: true,
      },
      {
        type: 'tool-result',
        toolCallId: 'call-1',
        toolName: 'get-weather-tool-1',
        output: {
          type: 'text',
          value: 'sunny',
        },
      },
      {
        type: 'tool-result',
        toolCallId: 'call-2',
        toolName: 'get-weather-tool-2',
        output: {
          type: 'error-text',
          value: 'Error: Fetching weather data failed',
        },
      },
    ],
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'reasoning',
        text: 'I have got the weather in Tokyo and Busan.',
      },
      {
        type: 'text',
        text: 'The weather in Tokyo is sunny. I could not get the weather in Busan.',
      },
    ],
  },
];

const messagesFixture2: ModelMessage[] = [
  {
    role: 'user',
    content: [{ type: 'text', text: 'Weather in Tokyo and Busan?' }],
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'reasoning',
        text: 'I need to get the weather in Tokyo and Busan.',
      },
      {
        type: 'tool-call',
        toolCallId: 'call-1',
        toolName: 'get-weather-tool-1',
        input: '{"city": "Tokyo"}',
      },
      {
        type: 'tool-call',
        toolCallId: 'call-2',
        toolName: 'get-weather-tool-2',
        input: '{"city": "Busan"}',
      },
      {
        type: 'tool-approval-request',
        toolCallId: 'call-1',
        approvalId: 'approval-1',
      },
    ],
  },
];

const multiTurnToolCallMessagesFixture: ModelMessage[] = [
  {
    role: 'user',
    content: [
      {
        type: 'text',
        text: 'ask me a question',
      },
    ],
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'text',
        text: 'What can i help you with',
      },
      {
        type: 'tool-call',
        toolCallId: 'toolu_01P9s4havAQSjDmS4eWT1N2V',
        toolName: 'AskUserQuestion',
        input: {
          question: 'What would you like help with today?',
          options: ['Tool 1 Option 1', 'Tool 1 Option 2', 'Tool 1 Option 3'],
        },
      },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'toolu_01P9s4havAQSjDmS4eWT1N2V',
        toolName: 'AskUserQuestion',
        output: { type: 'text', value: 'Something else' },
      },
    ],
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'tool-call',
        toolCallId: 'toolu_01TMAuwWKLmBoQtx7K88dxsQ',
        toolName: 'AskUserQuestion',
        input: {
          question: 'Ok what else?',
          options: ['Tool 2 Option 1', 'Tool 2 Option 2', 'Tool 2 Option 3'],
        },
      },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'toolu_01TMAuwWKLmBoQtx7K88dxsQ',
        toolName: 'AskUserQuestion',
        output: {
          type: 'text',
          value: "Other - I'll describe it",
        },
      },
    ],
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'text',
        text: 'What would you like to discuss or work on?',
      },
    ],
  },
  {
    role: 'user',
    content: [
      {
        type: 'text',
        text: 'never mind. lets end this conversation',
      },
    ],
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'text',
        text: 'ok, have a nice day',
      },
    ],
  },
  {
    role: 'user',
    content: [
      {
        type: 'text',
        text: 'thank you',
      },
    ],
  },
];

export const pruneMessagesCases: readonly PruneCase[] = [
  {
    name: "reasoning > all > should prune all reasoning parts",
    line: 221,
    run: async (pruneMessages, convertToModelMessages) => {
      const result = pruneMessages({
        messages: messagesFixture1,
        reasoning: 'all',
      });
      return result;
    },
  },
  {
    name: "reasoning > before-trailing-message > should prune the trailing message",
    line: 303,
    run: async (pruneMessages, convertToModelMessages) => {
      const result = pruneMessages({
        messages: messagesFixture1,
        reasoning: 'before-last-message',
      });
      return result;
    },
  },
  {
    name: "toolCalls > all > should prune all tool calls, results, errors, and approvals",
    line: 391,
    run: async (pruneMessages, convertToModelMessages) => {
      const result = pruneMessages({
        messages: messagesFixture1,
        toolCalls: 'all',
      });
      return result;
    },
  },
  {
    name: "toolCalls > before-last-message > should prune tool calls before last message",
    line: 436,
    run: async (pruneMessages, convertToModelMessages) => {
      const result = pruneMessages({
        messages: messagesFixture2,
        toolCalls: 'before-last-message',
      });
      return result;
    },
  },
  {
    name: "toolCalls > before-last-message > should prune tool calls and results from multi-turn conversation when last message has no tool calls",
    line: 483,
    run: async (pruneMessages, convertToModelMessages) => {
      const result = pruneMessages({
        messages: multiTurnToolCallMessagesFixture,
        toolCalls: 'before-last-message',
      });
      return result;
    },
  },
  {
    name: "toolCalls > before-last-2-messages > should prune all tool calls, results, errors, and approvals",
    line: 551,
    run: async (pruneMessages, convertToModelMessages) => {
      const result = pruneMessages({
        messages: messagesFixture1,
        toolCalls: 'before-last-2-messages',
      });
      return result;
    },
  },
  {
    name: "toolCalls > two tool settings > should prune all tool calls, results, errors, and approvals",
    line: 644,
    run: async (pruneMessages, convertToModelMessages) => {
      const result = pruneMessages({
        messages: messagesFixture1,
        toolCalls: [
          { type: 'all', tools: ['get-weather-tool-1'] },
          { type: 'before-last-2-messages', tools: ['get-weather-tool-2'] },
        ],
      });
      return result;
    },
  },
  {
    name: "toolCalls > selective tool pruning with approvals (regression) > should prune the approval response together with its request and tool-call",
    line: 722,
    run: async (pruneMessages, convertToModelMessages) => {
      const messages = JSON.parse(
        JSON.stringify(
          await convertToModelMessages([
            {
              role: 'user',
              parts: [
                {
                  type: 'text',
                  text: 'Weather in Tokyo and Busan?',
                },
              ],
            },
            {
              role: 'assistant',
              parts: [
                {
                  type: 'step-start',
                },
                {
                  type: 'tool-get-weather-tool-1',
                  toolCallId: 'call-1',
                  state: 'output-available',
                  input: { city: 'Tokyo' },
                  output: 'sunny',
                },
                {
                  type: 'tool-get-weather-tool-2',
                  toolCallId: 'call-2',
                  state: 'output-available',
                  input: { city: 'Busan' },
                  output: 'rainy',
                  approval: {
                    id: 'approval-1',
                    approved: true,
                  },
                },
              ],
            },
          ]),
        ),
      ) as ModelMessage[];
      const result = pruneMessages({
        messages,
        toolCalls: [{ type: 'all', tools: ['get-weather-tool-2'] }],
      });
      return result;
    },
  },
  {
    name: "toolCalls > selective tool pruning with approvals (regression) > should drop unresolved approval responses during selective pruning",
    line: 829,
    run: async (pruneMessages, convertToModelMessages) => {
      const messages: ModelMessage[] = [
        {
          role: 'user',
          content: [{ type: 'text', text: 'Weather in Tokyo and Busan?' }],
        },
        {
          role: 'assistant',
          content: [
            {
              type: 'tool-call',
              toolCallId: 'call-1',
              toolName: 'get-weather-tool-1',
              input: { city: 'Tokyo' },
            },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-approval-response',
              approvalId: 'unknown-approval',
              approved: true,
            },
            {
              type: 'tool-result',
              toolCallId: 'call-1',
              toolName: 'get-weather-tool-1',
              output: { type: 'text', value: 'sunny' },
            },
          ],
        },
      ];
      const result = pruneMessages({
        messages,
        toolCalls: [{ type: 'all', tools: ['get-weather-tool-2'] }],
      });
      return result;
    },
  },
];
