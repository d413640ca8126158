// Public face of the SDK adapters: ModelClients over a user-supplied `openai` or `@anthropic-ai/sdk` client.
export { chatCompletionsMessages, openAiChatCompletionsClient, openAiResponsesClient, toResponsesInput } from './openai.js';
export type { OpenAiChatCompletionsOptions, OpenAiRequestOptions, OpenAiResponsesOptions } from './openai.js';
export { ProviderResponseError, isProviderResponseError } from '../errors.js';
export { anthropicConversation, anthropicMessagesClient, anthropicTokenCounter } from './anthropic.js';
export type { AnthropicMessagesOptions, AnthropicRequestOptions, AnthropicTokenCounterOptions } from './anthropic.js';
