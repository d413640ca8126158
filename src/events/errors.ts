// Named errors for events that fail their schema, on append (InvalidEventError) or on read (EventDecodeError).
import type { z } from 'zod';
import { ContextLedgerError } from '../base/errors.js';

export interface EventIssue {
  /** The zod issue path, joined with dots: `items.0.type`. */
  readonly path: string;
  readonly message: string;
}

export const issuesOf = (error: z.ZodError): EventIssue[] =>
  error.issues.map((issue) => ({
    path: issue.path.map((p) => (typeof p === 'symbol' ? p.toString() : String(p))).join('.'),
    message: issue.message,
  }));

const describeIssues = (issues: readonly EventIssue[]): string =>
  issues.map((i) => `${i.path === '' ? '(root)' : i.path}: ${i.message}`).join('; ');

/**
 * A stored event cannot be decoded, or an event is missing in the middle of a read; the message names the session, the
 * seq and what is wrong.
 */
export class EventDecodeError extends ContextLedgerError {
  static override readonly code = 'EVENT_DECODE';
  readonly sessionId: string | undefined;
  readonly seq: number | undefined;
  readonly issues: readonly EventIssue[];
  constructor(args: { sessionId?: string | undefined; seq?: number | undefined; issues: readonly EventIssue[]; cause?: unknown }) {
    const where = `session ${JSON.stringify(args.sessionId ?? '?')} seq ${args.seq ?? '?'}`;
    super(`cannot decode event at ${where}: ${describeIssues(args.issues)}`, args.cause === undefined ? undefined : { cause: args.cause });
    this.sessionId = args.sessionId;
    this.seq = args.seq;
    this.issues = args.issues;
  }
}
/** @deprecated use EventDecodeError.isInstance */ export const isEventDecodeError = (e: unknown): e is EventDecodeError => EventDecodeError.isInstance(e);

/**
 * `append` got an event that fails its schema, holds a value that is not JSON (NaN, Infinity, a Date, a Map, a
 * function, undefined in an array, a cycle...; the path names it), is larger than `maxEventBytes` or cannot be
 * serialised, or the log's clock gave an unusable `at` (path `at`). Nothing of that append was written.
 */
export class InvalidEventError extends ContextLedgerError {
  static override readonly code = 'INVALID_EVENT';
  readonly sessionId: string | undefined;
  /** Position of the offending event in the appended batch. */
  readonly index: number;
  readonly eventType: string | undefined;
  readonly issues: readonly EventIssue[];
  constructor(args: { sessionId?: string | undefined; index: number; eventType?: string | undefined; issues: readonly EventIssue[] }) {
    super(
      `invalid event #${args.index}${args.eventType ? ` (${args.eventType})` : ''}` +
        `${args.sessionId !== undefined ? ` for session ${JSON.stringify(args.sessionId)}` : ''}: ${describeIssues(args.issues)}`,
    );
    this.sessionId = args.sessionId;
    this.index = args.index;
    this.eventType = args.eventType;
    this.issues = args.issues;
  }
}
/** @deprecated use InvalidEventError.isInstance */ export const isInvalidEventError = (e: unknown): e is InvalidEventError => InvalidEventError.isInstance(e);

/**
 * A projection's fates cannot be written as, or read back from, the compact fate-runs form; the message names the run.
 */
export class InvalidFateRunsError extends ContextLedgerError {
  static override readonly code = 'INVALID_FATE_RUNS';
}
/** @deprecated use InvalidFateRunsError.isInstance */ export const isInvalidFateRunsError = (e: unknown): e is InvalidFateRunsError => InvalidFateRunsError.isInstance(e);
