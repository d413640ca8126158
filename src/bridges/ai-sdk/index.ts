// context-ledger/ai-sdk: Vercel AI SDK (ai 5 and 6) bridge: message converters, a ModelClient, and a step recorder for generateText/streamText.
export {
  AI_SDK_APPROVAL_REQUEST_TYPE,
  AI_SDK_APPROVAL_RESPONSE_TYPE,
  AI_SDK_DATA_KEY,
  AI_SDK_MESSAGE_EXTRAS_KEY,
  AI_SDK_NEW_MESSAGE_KEY,
  AI_SDK_OUTPUT_KEY,
  AI_SDK_ROLE_KEY,
  AI_SDK_UNDEFINED_KEY,
  fromModelMessages,
  isErrorToolOutput,
  toModelMessages,
  toolOutputText,
} from './messages.js';
export type { FromModelMessagesOptions } from './messages.js';
export { aiSdkModelClient } from './model-client.js';
export type { AiSdkModelClientOptions } from './model-client.js';
export { createAiSdkRecorder } from './recorder.js';
export type { AiSdkPrepareStepOptions, AiSdkRecorder, AiSdkRecorderOptions, AiSdkStepResult } from './recorder.js';
