// The AI SDK bridge against ai 5 (installed as `ai-v5`) and its MockLanguageModelV2: the bridge's `ai` import is ai 5 here.
import { describe, vi } from 'vitest';
import * as ai from 'ai-v5';
import * as aiTest from 'ai-v5/test';
import { installedAiSdk } from '../support/ai-sdk-under-test.js';
import { aiSdkSuite } from './ai-sdk-suite.js';

vi.mock('ai', async () => await import('ai-v5'));

const sdk = installedAiSdk('ai-v5', aiTest);

describe(`ai-sdk bridge (ai ${sdk.version} as ai-v5)`, () => {
  aiSdkSuite({ major: sdk.major, ai: ai as never, mockModel: sdk.mockModel });
});
