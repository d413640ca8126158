// A ModelClient over any AI SDK LanguageModel, so the runtime runs on every `@ai-sdk/*` provider.
import { generateText, jsonSchema, tool } from 'ai';
import type { LanguageModel, ToolSet } from 'ai';
import { InvalidOptionsError } from '../../base/errors.js';
import type { ModelClient, ModelResult, ModelUsage, ToolSpec } from '../../model/index.js';
import { mapContextOverflow } from '../../model/index.js';
import { fromModelMessages, toModelMessages } from './messages.js';

/** Options of {@link aiSdkModelClient}: extra `generateText` settings sent with every request. */
export interface AiSdkModelClientOptions {
  /** `temperature`, `maxOutputTokens`, `providerOptions`, `maxRetries`, `headers`, ... (not model, messages, tools or prompt). */
  readonly settings?: Readonly<Record<string, unknown>>;
}

const RESERVED = ['model', 'messages', 'prompt', 'system', 'tools', 'abortSignal', 'stopWhen', 'prepareStep', 'allowSystemInMessages'];

const toolSetOf = (specs: readonly ToolSpec[]): ToolSet =>
  Object.fromEntries(
    specs.map((spec) => [
      spec.name,
      tool({ ...(spec.description !== undefined ? { description: spec.description } : {}), inputSchema: jsonSchema(spec.parameters as never) }),
    ]),
  ) as ToolSet;

const count = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** Usage as the runtime records it; ai 6 may give token details as objects, ai 5 as numbers. */
const usageOf = (usage: unknown): ModelUsage | undefined => {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const raw = usage as Record<string, unknown>;
  const inputTokens = count(raw['inputTokens']);
  const outputTokens = count(raw['outputTokens']);
  const totalTokens = count(raw['totalTokens']) ?? (inputTokens !== undefined && outputTokens !== undefined ? inputTokens + outputTokens : undefined);
  return {
    ...(inputTokens !== undefined ? { inputTokens } : {}),
    ...(outputTokens !== undefined ? { outputTokens } : {}),
    ...(totalTokens !== undefined ? { totalTokens } : {}),
    raw: JSON.parse(JSON.stringify(usage)) as unknown,
  };
};

/**
 * A {@link ModelClient} over an AI SDK `LanguageModel` (`openai('gpt-4.1')`, `anthropic('claude-sonnet-4-5')`,
 * a gateway id, ...): one `generateText` step with the request's tools declared but not executed (the runtime
 * runs them). Items go out through `toModelMessages` and the answer comes back through `fromModelMessages`
 * (reasoning ids prefixed with the response id). The model is the one given here; `request.model` is only recorded.
 * @example
 * import { openai } from '@ai-sdk/openai';
 * const agent = Agents.react({ modelClient: aiSdkModelClient(openai('gpt-4.1')), model: 'gpt-4.1', tools });
 */
export const aiSdkModelClient = (model: LanguageModel, options: AiSdkModelClientOptions = {}): ModelClient => {
  const settings = options.settings ?? {};
  const clash = RESERVED.filter((key) => key in settings);
  if (clash.length > 0) {
    throw new InvalidOptionsError('aiSdkModelClient', [{ path: 'settings', message: `may not set ${clash.join(', ')} (the request gives them)` }]);
  }
  return {
    async create(request, { signal } = {}): Promise<ModelResult> {
      const tools = request.tools ?? [];
      const messages = toModelMessages(request.items);
      const result = await mapContextOverflow(() => generateText({
        ...settings,
        model,
        ...(request.systemPrompt ? { system: request.systemPrompt } : {}),
        messages,
        // ai 7 refuses system messages among `messages` unless allowed; these are memory's own (a summary, a
        // system item the application recorded), sent as ai 5 and 6 send them. Earlier majors ignore the option.
        ...(messages.some((m) => m.role === 'system') ? { allowSystemInMessages: true } : {}),
        ...(tools.length > 0 ? { tools: toolSetOf(tools) } : {}),
        ...(signal ? { abortSignal: signal } : {}),
      } as Parameters<typeof generateText>[0]));
      const items = fromModelMessages(result.response.messages, { reasoningIdPrefix: `reasoning_${result.response.id}`, undefinedKeys: 'drop' });
      const usage = usageOf(result.usage);
      return { items, ...(result.text.length > 0 ? { outputText: result.text } : {}), ...(usage ? { usage } : {}) };
    },
  };
};
