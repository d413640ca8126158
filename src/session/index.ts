// Public face of session: log-backed memory (and, later, AgentSession).
export { InMemoryAgentMemory, appenderFor, openAgentMemory } from './agent-memory.js';
export type { InMemoryAgentMemoryOptions, OpenAgentMemoryOptions } from './agent-memory.js';
