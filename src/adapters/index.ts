// Public face of the SDK adapters: ModelClients over a user-supplied `openai` or `@anthropic-ai/sdk` client.
export { chatCompletionsMessages, openAiChatCompletionsClient, openAiResponsesClient, openAiResponsesCompactor, toResponsesInput } from './openai.js';
export type { OpenAiChatCompletionsOptions, OpenAiRequestOptions, OpenAiResponsesCompactorOptions, OpenAiResponsesOptions } from './openai.js';
export { ProviderResponseError, isProviderResponseError } from './errors.js';
export { anthropicCompactor, anthropicConversation, anthropicMessagesClient, anthropicTokenCounter } from './anthropic.js';
export type { AnthropicCompactorOptions, AnthropicMessagesOptions, AnthropicRequestOptions, AnthropicTokenCounterOptions } from './anthropic.js';
