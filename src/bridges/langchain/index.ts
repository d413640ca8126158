// context-ledger/langchain: LangChain.js bridge: BaseMessage converters and a trimMessages backed by the context projector.
export { LANGCHAIN_KEY, LANGCHAIN_MESSAGE_ITEM_TYPE, fromBaseMessages, toBaseMessages } from './messages.js';
export { trimMessages, trimMessagesWithReport } from './trim.js';
export type { LedgerTrimMessagesFields, TextSplitterLike, TokenCountingModel, TrimmedMessages } from './trim.js';
