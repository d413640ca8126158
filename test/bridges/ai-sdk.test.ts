// The AI SDK bridge against the installed `ai` (6 in the lockfile; scripts/sdk-matrix.sh installs 5, 6 and 7 here)
// and the mock model of its spec version.
import { describe } from 'vitest';
import * as ai from 'ai';
import * as aiTest from 'ai/test';
import { installedAiSdk } from '../support/ai-sdk-under-test.js';
import { aiSdkSuite } from './ai-sdk-suite.js';

const sdk = installedAiSdk('ai', aiTest);

describe(`ai-sdk bridge (ai ${sdk.version})`, () => {
  aiSdkSuite({ major: sdk.major, ai: ai as never, mockModel: sdk.mockModel });
});
