// Tagged errors for events that fail their schema, on append (InvalidEventError) or on read (EventDecodeError).
import type { z } from 'zod';
import { ContextLedgerError, errorGuard } from '../errors.js';

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

/** A stored event could not be decoded: names the session, the seq and what is wrong. */
export class EventDecodeError extends ContextLedgerError {
  declare readonly code: 'EVENT_DECODE';
  readonly _tag = 'EventDecodeError' as const;
  readonly sessionId: string | undefined;
  readonly seq: number | undefined;
  readonly issues: readonly EventIssue[];
  constructor(args: { sessionId?: string | undefined; seq?: number | undefined; issues: readonly EventIssue[]; cause?: unknown }) {
    const where = `session ${JSON.stringify(args.sessionId ?? '?')} seq ${args.seq ?? '?'}`;
    super('EVENT_DECODE', `cannot decode event at ${where}: ${describeIssues(args.issues)}`, args.cause === undefined ? undefined : { cause: args.cause });
    this.name = 'EventDecodeError';
    this.sessionId = args.sessionId;
    this.seq = args.seq;
    this.issues = args.issues;
  }
}

export const isEventDecodeError = errorGuard<EventDecodeError>('EVENT_DECODE');

/** An event handed to `append` does not match its schema; nothing was written. */
export class InvalidEventError extends ContextLedgerError {
  declare readonly code: 'INVALID_EVENT';
  readonly _tag = 'InvalidEventError' as const;
  readonly sessionId: string | undefined;
  /** Position of the offending event in the appended batch. */
  readonly index: number;
  readonly eventType: string | undefined;
  readonly issues: readonly EventIssue[];
  constructor(args: { sessionId?: string | undefined; index: number; eventType?: string | undefined; issues: readonly EventIssue[] }) {
    super(
      'INVALID_EVENT',
      `invalid event #${args.index}${args.eventType ? ` (${args.eventType})` : ''}` +
        `${args.sessionId !== undefined ? ` for session ${JSON.stringify(args.sessionId)}` : ''}: ${describeIssues(args.issues)}`,
    );
    this.name = 'InvalidEventError';
    this.sessionId = args.sessionId;
    this.index = args.index;
    this.eventType = args.eventType;
    this.issues = args.issues;
  }
}

export const isInvalidEventError = errorGuard<InvalidEventError>('INVALID_EVENT');

/** A projection's fates cannot be written as, or read back from, the compact fate-runs form; the message names the run. */
export class InvalidFateRunsError extends ContextLedgerError {
  declare readonly code: 'INVALID_FATE_RUNS';
  readonly _tag = 'InvalidFateRunsError' as const;
  constructor(message: string) {
    super('INVALID_FATE_RUNS', message);
    this.name = 'InvalidFateRunsError';
  }
}

export const isInvalidFateRunsError = errorGuard<InvalidFateRunsError>('INVALID_FATE_RUNS');
