// Public face of the provider shapes: Chat Completions and Anthropic Messages converters and their types.
export type {
  ChatContentPart,
  ChatMessage,
  ChatRole,
  ChatToolCall,
  EmptyContent,
  ToChatCompletionsOptions,
} from './chat-completions.js';
export {
  CHAT_MESSAGE_ITEM_TYPE,
  EMPTY_CONTENT_KEY,
  fromChatCompletions,
  reasoningTextOf,
  toChatCompletions,
} from './chat-completions.js';
export type {
  AnthropicContentBlock,
  AnthropicConversation,
  AnthropicMessage,
  AnthropicRedactedThinkingBlock,
  AnthropicSystem,
  AnthropicTextBlock,
  AnthropicThinkingBlock,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
  ToAnthropicMessagesOptions,
} from './anthropic.js';
export { ANTHROPIC_FIRST_TURN_PLACEHOLDER, ANTHROPIC_MESSAGE_ITEM_TYPE, fromAnthropicMessages, toAnthropicMessages } from './anthropic.js';
export { CHAT_MESSAGE_TOKENS, chatCompletionsRequestTokens, itemFramingTokens } from './request-tokens.js';
