// Log-backed AgentMemory: openAgentMemory over any SessionEventLog, InMemoryAgentMemory over an in-memory one.
import { randomUUID } from 'node:crypto';
import type { MemorySnapshot, NewSessionEvent, SessionEvent } from '../events/index.js';
import type { MemoryItem } from '../items/index.js';
import { createMemoryLog, type Clock, type SessionEventLog } from '../log/index.js';
import { type AgentMemory, type EventAppender, type MemoryCompressor, type MemoryEntry, type MemoryState } from '../memory/index.js';
import { rebuildState } from './checkpoint.js';
import { compressAfterWrite } from './compaction.js';
import { createLiveSession } from './live.js';

export interface OpenAgentMemoryOptions {
  readonly compressor?: MemoryCompressor | undefined;
}

export const appenderFor =
  (log: SessionEventLog, sessionId: string): EventAppender =>
  (events, { expectedSeq }) =>
    log.append(sessionId, events, { expectedSeq });

/**
 * An AgentMemory whose writes append to `log` under `sessionId`; the session's existing events are
 * folded on open (from its latest valid checkpoint).
 * @example const memory = await openAgentMemory(await openLevelLog('./.ledger'), 'session-1')
 */
export const openAgentMemory = async (
  log: SessionEventLog,
  sessionId: string,
  options: OpenAgentMemoryOptions = {},
): Promise<AgentMemory> => {
  const { state, run, headSeq } = await rebuildState(log, sessionId);
  return createLiveSession({
    sessionId,
    appender: appenderFor(log, sessionId),
    state: { memory: state, run },
    headSeq,
    ...(options.compressor ? { afterItemsWritten: compressAfterWrite(options.compressor, sessionId) } : {}),
  }).memory;
};

export interface InMemoryAgentMemoryOptions extends OpenAgentMemoryOptions {
  readonly sessionId?: string;
  readonly clock?: Clock;
}

/**
 * The same event-sourced memory over an in-memory log (no disk). `log` exposes the events.
 * @example const memory = new InMemoryAgentMemory(); await memory.addUserInput('hi'); memory.getItems()
 */
export class InMemoryAgentMemory implements AgentMemory {
  readonly sessionId: string;
  readonly log: SessionEventLog;
  readonly #memory: AgentMemory;

  constructor(options: InMemoryAgentMemoryOptions = {}) {
    this.sessionId = options.sessionId ?? randomUUID();
    this.log = createMemoryLog(options.clock ? { clock: options.clock } : {});
    this.#memory = createLiveSession({
      sessionId: this.sessionId,
      appender: appenderFor(this.log, this.sessionId),
      ...(options.compressor ? { afterItemsWritten: compressAfterWrite(options.compressor, this.sessionId) } : {}),
    }).memory;
  }

  addUserInput(input: string | MemoryItem | readonly MemoryItem[]): Promise<readonly SessionEvent[]> {
    return this.#memory.addUserInput(input);
  }
  addOutputItems(items: readonly MemoryItem[]): Promise<readonly SessionEvent[]> {
    return this.#memory.addOutputItems(items);
  }
  addToolOutput(callId: string, output: string, options?: { readonly name?: string; readonly isError?: boolean }): Promise<readonly SessionEvent[]> {
    return this.#memory.addToolOutput(callId, output, options);
  }
  getItems(): MemoryItem[] {
    return this.#memory.getItems();
  }
  getEntries(): readonly MemoryEntry[] {
    return this.#memory.getEntries();
  }
  getSummary(): string | null {
    return this.#memory.getSummary();
  }
  setSummary(summary: string | null): Promise<readonly SessionEvent[]> {
    return this.#memory.setSummary(summary);
  }
  snapshot(): MemorySnapshot {
    return this.#memory.snapshot();
  }
  restore(snapshot: MemorySnapshot): Promise<readonly SessionEvent[]> {
    return this.#memory.restore(snapshot);
  }
  clear(): Promise<readonly SessionEvent[]> {
    return this.#memory.clear();
  }
  record(events: readonly NewSessionEvent[]): Promise<readonly SessionEvent[]> {
    return this.#memory.record(events);
  }
  state(): MemoryState {
    return this.#memory.state();
  }
  headSeq(): number {
    return this.#memory.headSeq();
  }
}
