// `context-ledger events SESSION [--from N --to N --type T]`: a session's events, one line each (or JSON).
import type { Command } from 'commander';
import { isEventType, type SessionEvent } from '../../events/index.js';
import { intOption, requireSession, withCommonOptions, withReadLedger, type CommonOptions } from '../common.js';
import { usage } from '../errors.js';
import { followLedger } from '../follow.js';
import { createOutput, oneLine, table } from '../output.js';

interface EventsOptions extends CommonOptions {
  readonly from?: string;
  readonly to?: string;
  readonly type?: string[];
  readonly follow?: boolean;
}

/** A short description of an event for people. */
export const describeEvent = (e: SessionEvent): string => {
  switch (e.type) {
    case 'user.input':
    case 'model.output':
    case 'model.responded':
      return oneLine(e.items.map((i) => (i.type === 'function_call' ? `${String((i as { name?: unknown }).name)}(${String((i as { arguments?: unknown }).arguments)})` : i.type === 'message' ? JSON.stringify((i as { content?: unknown }).content) : i.type)).join(', '));
    case 'tool.result':
      return oneLine(`${e.name ?? ''} ${e.callId}${e.isError ? ' ERROR' : ''}: ${e.output}`);
    case 'test.result':
      return `${e.status} ${e.suite ?? ''} passed ${e.passed ?? '-'} failed ${e.failed ?? '-'}`;
    case 'command.failed':
      return oneLine(`${e.command} exit ${e.exitCode ?? '-'}`);
    case 'approval.recorded':
      return oneLine(`${e.approved ? 'approved' : 'refused'} by ${e.by ?? '?'}: ${e.action}`);
    case 'artifact.changed':
      return `${e.change} ${e.path}`;
    case 'memory.compacted':
      return `${e.trigger} ${e.policy.name}${e.reason ? ` (${e.reason.kind}${e.reason.value !== undefined ? ` ${e.reason.value}` : ''}${e.reason.threshold !== undefined ? ` > ${e.reason.threshold}` : ''})` : ''}: kept ${e.keptIds.length}, dropped ${e.droppedIds.length}${e.tokens ? `, tokens ${e.tokens.before} → ${e.tokens.after}` : ''}`;
    case 'context.projected':
      return `sent ${e.report.projectedItemCount}/${e.report.sourceItemCount} items${e.report.projectedTokens !== undefined ? `, ${e.report.projectedTokens} tokens` : ''}`;
    case 'model.requested':
      return `${e.model}, ${e.itemCount} items${e.promptSeq !== undefined ? `, prompt of seq ${e.promptSeq}` : ''}`;
    case 'step.started':
    case 'step.ended':
      return `run ${e.runId}`;
    case 'run.failed':
      return oneLine(`${e.reason}: ${e.message}`);
    case 'model.failed':
      return oneLine(`${e.reason}${e.requestTokens !== undefined ? ` ${e.requestTokens}` : ''}${e.limitTokens !== undefined ? ` > ${e.limitTokens}` : ''}: ${e.error}`);
    default:
      return '';
  }
};

export const eventsCommand = (program: Command): Command =>
  withCommonOptions(
    program
      .command('events')
      .description("print a session's events (--json: a JSON array of the events as stored)")
      .argument('<session>', 'session id')
      .option('--from <seq>', 'first seq (inclusive)')
      .option('--to <seq>', 'last seq (inclusive)')
      .option('--type <type...>', 'only these event types')
      .option('--follow', 'keep printing events as they are appended (Ctrl-C to stop); --json prints one event per line'),
  ).action(async (sessionId: string, options: EventsOptions) => {
    const fromSeq = intOption('--from', options.from, 1);
    const toSeq = intOption('--to', options.to, 1);
    for (const t of options.type ?? []) if (!isEventType(t)) throw usage(`--type: unknown event type ${JSON.stringify(t)}`);
    const types = options.type ? new Set(options.type) : undefined;
    if (options.follow) {
      if (toSeq !== undefined) throw usage('--follow and --to cannot be used together');
      await followEvents(sessionId, options, fromSeq ?? 1, types);
      return;
    }
    await withReadLedger(options, async ({ log }, out) => {
      await requireSession(log, sessionId, options.dir);
      const range = { ...(fromSeq !== undefined ? { fromSeq } : {}), ...(toSeq !== undefined ? { toSeq } : {}) };
      if (out.json) {
        // A JSON array written as it streams, one event per line.
        let first = true;
        out.line('[');
        for await (const event of log.read(sessionId, range)) {
          if (types && !types.has(event.type)) continue;
          out.line(`${first ? '' : ','}${JSON.stringify(event)}`);
          first = false;
        }
        out.line(']');
        return;
      }
      const rows: (string | number)[][] = [];
      for await (const event of log.read(sessionId, range)) {
        if (types && !types.has(event.type)) continue;
        const step = 'step' in event && typeof event.step === 'number' ? String(event.step) : '';
        rows.push([event.seq, event.at, event.type, step, describeEvent(event)]);
      }
      for (const line of table(['SEQ', 'AT', 'TYPE', 'STEP', 'WHAT'], rows, ['right', 'left', 'left', 'right', 'left'])) out.line(line);
    });
  });

/** `events --follow`: prints each event as it arrives until Ctrl-C (SIGINT) or SIGTERM. */
const followEvents = async (sessionId: string, options: EventsOptions, fromSeq: number, types: ReadonlySet<string> | undefined): Promise<void> => {
  const out = createOutput(options.json === true);
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // Lines are gathered and written together (one write per read chunk rather than per event, so a busy writer's
  // events go out as fast as they are read), at the latest on the next turn of the event loop.
  let pending: string[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.join('\n');
    pending = [];
    out.line(text);
  };
  const print = (line: string): void => {
    pending.push(line);
    if (pending.length >= 1024) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  try {
    for await (const event of followLedger(options.dir, sessionId, fromSeq, controller.signal, (message) => out.note(message))) {
      if (types && !types.has(event.type)) continue;
      if (out.json) print(JSON.stringify(event));
      else {
        const step = 'step' in event && typeof event.step === 'number' ? String(event.step) : '';
        print([event.seq, event.at, event.type, step, describeEvent(event)].join('  '));
      }
    }
  } finally {
    flush();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
};
