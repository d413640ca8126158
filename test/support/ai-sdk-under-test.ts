// An installed AI SDK (`ai`, or the `ai-v5` alias) with a mock model of its major's spec: V2 for ai 5, V3 for 6, V4 for 7.
// The lockfile installs ai 6 as `ai`; scripts/sdk-matrix.sh installs other versions there, so tests ask what is installed.
import { installedVersion } from './installed-sdk.js';

/** What a doGenerate answer holds, in any spec version. */
export type MockContent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: string };

type MockModelClass = new (options: { modelId?: string; doGenerate?: (options: never) => Promise<unknown>; doStream?: (options: never) => Promise<unknown> }) => unknown;

export interface InstalledAiSdk {
  /** The package name (`ai`, `ai-v5`) and its installed version. */
  readonly name: string;
  readonly version: string;
  readonly major: 5 | 6 | 7;
  /** The mock language model class of the major's spec version (from `<name>/test`). */
  readonly MockModel: MockModelClass;
  /** Usage as the spec version reports it (10 in, 5 out). */
  readonly usage: unknown;
  /** A finish reason as the spec version gives it. */
  finishReason(reason: 'stop' | 'tool-calls'): unknown;
  /** A mock model answering these contents in turn; `prompts` collects every prompt it was sent, `calls` every call's options. */
  mockModel(answers: readonly MockContent[][], prompts: unknown[][], calls?: unknown[], modelId?: string): unknown;
}

const mockNames = { 5: 'MockLanguageModelV2', 6: 'MockLanguageModelV3', 7: 'MockLanguageModelV4' } as const;

/** The AI SDK installed as `name`, given its `<name>/test` module. */
export const installedAiSdk = (name: string, testModule: Record<string, unknown>): InstalledAiSdk => {
  const version = installedVersion(name);
  const major = Number(version.split('.')[0]);
  if (major !== 5 && major !== 6 && major !== 7) throw new Error(`${name}@${version}: the bridge tests know ai 5, 6 and 7`);
  const MockModel = testModule[mockNames[major]];
  if (typeof MockModel !== 'function') throw new Error(`${name}@${version}: ${name}/test has no ${mockNames[major]}`);
  const usage =
    major === 5
      ? { inputTokens: 10, outputTokens: 5, totalTokens: 15 }
      : { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };
  const finishReason = (reason: 'stop' | 'tool-calls'): unknown => (major === 5 ? reason : { unified: reason, raw: undefined });
  return {
    name,
    version,
    major,
    MockModel: MockModel as MockModelClass,
    usage,
    finishReason,
    mockModel: (answers, prompts, calls = [], modelId) => {
      let i = 0;
      return new (MockModel as MockModelClass)({
        ...(modelId !== undefined ? { modelId } : {}),
        doGenerate: async (options: never) => {
          prompts.push((options as { prompt: unknown[] }).prompt);
          calls.push(options);
          const content = answers[Math.min(i++, answers.length - 1)]!;
          const toolCalls = content.some((c) => c.type === 'tool-call');
          return { content, finishReason: finishReason(toolCalls ? 'tool-calls' : 'stop'), usage, warnings: [], response: { id: `resp-${i}` } };
        },
      });
    },
  };
};
