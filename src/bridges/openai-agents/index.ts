// context-ledger/openai-agents: OpenAI Agents SDK bridge: AgentInputItem converters, a log-backed Session and a projecting input filter.
export {
  AGENTS_GENERATED_ID_KEY,
  AGENTS_OUTPUT_KEY,
  AGENTS_TYPE_KEY,
  AGENTS_UNTYPED_KEY,
  agentsOutputText,
  fromAgentInputItems,
  toAgentInputItems,
} from './items.js';
export type { FromAgentInputItemsOptions } from './items.js';
export { HISTORY_MUTATIONS_EDITOR, HISTORY_TRANSACTION_EDITOR, LedgerSession, POP_ITEM_POLICY, openLedgerSession } from './session.js';
export type { LedgerSessionOptions } from './session.js';
