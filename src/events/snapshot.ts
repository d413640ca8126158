// MemorySnapshot: what a compaction policy is handed, and what `restore` takes.
import type { MemoryItem } from '../items/index.js';
import type { SessionEventOf } from './schemas.js';
import type { FactEventType } from './shapes.js';

type EnvelopeKey = 'sessionId' | 'at' | 'v' | 'prevHash' | 'hash' | 'contentDigest' | 'contentSalt';
type WithoutEnvelope<T> = T extends unknown ? Omit<T, EnvelopeKey> : never;

/**
 * A recorded fact as memory keeps it: the event's type, payload and seq, without the other envelope
 * fields (session id, time, version, hashes, content digest and salt), so a fork's memory equals its source's at the same seq.
 */
export type RecordedFact = WithoutEnvelope<SessionEventOf<FactEventType>>;

export interface MemorySnapshot {
  /** Raw memory items (the summary is not among them). */
  readonly items: readonly MemoryItem[];
  readonly summary?: string | null | undefined;
  /** Failed commands, test results, approvals, artifact changes and sandbox state since the last compaction. */
  readonly facts?: readonly RecordedFact[] | undefined;
  /** Files read, accumulated by earlier compactions. */
  readonly readFiles?: readonly string[] | undefined;
  /** Files changed, accumulated by earlier compactions. */
  readonly modifiedFiles?: readonly string[] | undefined;
}
