// Public face of context-ledger/testing: arbitraries, law checks and the store contract suite for users' own components.
export { arbitraryBudget, arbitraryItems } from './arbitraries.js';
export type { ArbitraryBudgetOptions, ArbitraryItemsOptions } from './arbitraries.js';
export { assertProjectorLaws, checkProjectorLaws, deepFreeze, isTierRewriteOf } from './projector-laws.js';
export type { ProjectorLawOptions } from './projector-laws.js';
export { arbitraryEventBatches, arbitraryEventItem, arbitraryNewEvent } from './events.js';
export type { ArbitraryEventsOptions } from './events.js';
export { checkSessionLaws } from './runtime-laws.js';
export type { CheckSessionLawsOptions, SessionLawViolation } from './runtime-laws.js';
export {
  collect,
  describeSessionEventLogContract,
  expectWellFormedChain,
  inputs,
  rejectionOf,
  textOfInput,
  tickingClock,
  toolResult,
  userInput,
} from './log-contract.js';
export type {
  ContractAssertion,
  ContractTestApi,
  LogHarnessOpenOptions,
  LogHarnessStore,
  SessionEventLogHarness,
} from './log-contract.js';
export { checkSessionEventLogModel } from './log-model.js';
export type { LogModelCheckOptions } from './log-model.js';
