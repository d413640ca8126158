// Public face of items: shapes, constructors, guards, sizes and tool-call joins.
export type {
  ContentPart,
  FunctionCallItem,
  FunctionCallOutputItem,
  MemoryItem,
  MessageItem,
  MessageRole,
  OtherItem,
  ReasoningItem,
  ToolCall,
} from './types.js';
export {
  assistantMessage,
  functionCall,
  functionCallOutput,
  isFunctionCall,
  isFunctionCallOutput,
  isMessage,
  isReasoning,
  isUserMessage,
  itemsOfInput,
  lastAssistantMessage,
  reasoning,
  systemMessage,
  textOf,
  toolCallArguments,
  toolCallName,
  userMessage,
} from './helpers.js';
export { approxChars } from './size.js';
export { UnansweredCallTracker, callIdsOf, outputCallIdOf, toolCallsOf, toolNamesByCallId, unansweredCalls } from './tool-calls.js';
export type { ToolCallInfo } from './tool-calls.js';
