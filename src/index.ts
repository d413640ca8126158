// context-ledger: an event log for agent sessions, memory as a pure fold, and audited context projection.
export * from './errors.js';
export * from './items/index.js';
export * from './model/index.js';
export * from './events/index.js';
export * from './log/index.js';
export * from './memory/index.js';
export * from './context/index.js';
export * from './compact/index.js';
export * from './session/index.js';
export * from './runtime/index.js';
export * from './replay/index.js';
