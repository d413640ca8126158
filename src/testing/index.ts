// Public face of context-ledger/testing: arbitraries, law checks and the store contract suite for users' own components.
export { arbitraryBudget, arbitraryItems } from './arbitraries.js';
export type { ArbitraryBudgetOptions, ArbitraryItemsOptions } from './arbitraries.js';
export { ProjectorLawError, assertProjectorLaws, checkProjectorLaws, deepFreeze, isProjectorLawError, isTierRewriteOf } from './projector-laws.js';
export type { ProjectorLawOptions } from './projector-laws.js';
export { arbitraryEventBatches, arbitraryEventItem, arbitraryNewEvent } from './events.js';
export type { ArbitraryEventsOptions } from './events.js';
export { assertSessionLaws, checkSessionLaws } from './runtime-laws.js';
export type { CheckSessionLawsOptions, SessionLawViolation } from './runtime-laws.js';
export type { ContractTestApi } from './contract-api.js';
export { describeModelClientContract } from './model-client-contract.js';
export type { ModelClientHarness, ModelContractTurn } from './model-client-contract.js';
export { describeAgentMemoryContract } from './agent-memory-contract.js';
export type { AgentMemoryHarness } from './agent-memory-contract.js';
export { describeCompactPolicyContract } from './compact-policy-contract.js';
export type { CompactPolicyHarness } from './compact-policy-contract.js';
export { checkFateLaw, createFateLawChecker } from '../replay/fate-law.js';
export type { FateLawChecker, FateLawViolation } from '../replay/fate-law.js';
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
  LogContractTestApi,
  LogHarnessOpenOptions,
  LogHarnessStore,
  SessionEventLogHarness,
} from './log-contract.js';
export { checkSessionEventLogModel } from './log-model.js';
export { describeLogEngineContract, engineRows } from './log-engine-contract.js';
export type { LogEngineHarness, LogEngineHarnessStore } from './log-engine-contract.js';
export { deterministicSalts } from '../log/index.js';
export type { SaltSource } from '../log/index.js';
export type { LogModelCheckOptions } from './log-model.js';
