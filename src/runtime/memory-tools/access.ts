// What the runtime hands its built-in memory tools besides a tool's context: the session and the agent's policy.
import type { CompactPolicy } from '../../compact/index.js';
import type { NewSessionEvent } from '../../events/index.js';
import type { AgentSession } from '../../session/index.js';
import type { ToolContext } from '../tools.js';
import { ToolFailedError } from '../errors.js';

/** The key under which a step's tool context carries {@link MemoryToolAccess} (a symbol: no user tool sees it by accident). */
export const MEMORY_ACCESS: unique symbol = Symbol.for('context-ledger.memory-access');

export interface MemoryToolAccess {
  readonly session: AgentSession;
  readonly compactPolicy?: CompactPolicy | undefined;
  /** Appends events made by the call (refused once the call has ended, like `context.record`). */
  record(events: readonly NewSessionEvent[]): Promise<void>;
}

/** The memory access of a tool context, or an error naming the tool when it runs outside an agent's step. */
export const memoryAccessOf = (context: ToolContext, tool: string): MemoryToolAccess => {
  const access = (context as unknown as { [MEMORY_ACCESS]?: MemoryToolAccess })[MEMORY_ACCESS];
  if (!access) throw new ToolFailedError(tool, `${tool} runs only inside an agent's step (its context has no session)`);
  return access;
};
