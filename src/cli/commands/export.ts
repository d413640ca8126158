// `context-ledger export SESSION --otlp URL [--header K=V…]`: a recorded session's spans to an OpenTelemetry backend (OTLP/HTTP, JSON).
import type { Command } from 'commander';
import { sessionSpanRecords, type SessionSpanRecord } from '../../otel/index.js';
import { requireSession, withCommonOptions, withReadLedger, type CommonOptions } from '../common.js';
import { CliError, usage } from '../errors.js';
import { progressBar } from '../progress.js';

interface ExportOptions extends CommonOptions {
  readonly otlp?: string;
  readonly header: string[];
  readonly captureContent?: boolean;
  readonly serviceName: string;
  readonly provider?: string;
  readonly batch?: string;
}

/** What an OTLP exporter reads of a span (the SDK's ReadableSpan, built here from the records: no SDK needed). */
interface ExportableSpan {
  readonly name: string;
  readonly kind: number;
  spanContext(): { traceId: string; spanId: string; traceFlags: number };
  readonly parentSpanContext?: { traceId: string; spanId: string; traceFlags: number };
  readonly startTime: [number, number];
  readonly endTime: [number, number];
  readonly duration: [number, number];
  readonly status: { code: number; message?: string };
  readonly attributes: Record<string, unknown>;
  readonly links: readonly never[];
  readonly events: readonly never[];
  readonly ended: true;
  readonly resource: { readonly attributes: Record<string, unknown> };
  readonly instrumentationScope: { readonly name: string; readonly version?: string };
  readonly droppedAttributesCount: 0;
  readonly droppedEventsCount: 0;
  readonly droppedLinksCount: 0;
}

interface OtlpExporter {
  export(spans: ExportableSpan[], done: (result: { code: number; error?: Error }) => void): void;
  shutdown(): Promise<void>;
}

const hr = (ms: number): [number, number] => {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
};

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** `--header K=V` (repeatable) as an object; a header without `=` or with an empty name is a usage error. */
export const parseHeaders = (values: readonly string[]): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf('=');
    if (at <= 0) throw usage(`--header must be NAME=VALUE, got ${JSON.stringify(value)}`);
    headers[value.slice(0, at).trim()] = value.slice(at + 1);
  }
  return headers;
};

/** The traces URL: a base URL (`http://localhost:4318`) gets the OTLP path `/v1/traces`; a URL with a path is used as given. */
export const tracesUrl = (value: string): string => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usage(`--otlp must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usage(`--otlp must be an http(s) URL, got ${JSON.stringify(value)}`);
  if (url.pathname === '' || url.pathname === '/') url.pathname = '/v1/traces';
  return url.toString();
};

const exportable = (record: SessionSpanRecord, resource: ExportableSpan['resource'], scope: ExportableSpan['instrumentationScope']): ExportableSpan => {
  const context = { traceId: record.traceId, spanId: record.spanId, traceFlags: 1 };
  return {
    name: record.name,
    kind: record.kind === 'client' ? 2 : 0,
    spanContext: () => context,
    ...(record.parentSpanId !== undefined ? { parentSpanContext: { traceId: record.traceId, spanId: record.parentSpanId, traceFlags: 1 } } : {}),
    startTime: hr(record.startMs),
    endTime: hr(record.endMs),
    duration: hr(Math.max(0, record.endMs - record.startMs)),
    status: record.error ? { code: 2, message: record.error.message } : { code: 0 },
    attributes: record.attributes,
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
};

const loadExporter = async (url: string, headers: Record<string, string>): Promise<OtlpExporter> => {
  let module: { OTLPTraceExporter: new (config: { url: string; headers: Record<string, string> }) => OtlpExporter };
  try {
    module = (await import('@opentelemetry/exporter-trace-otlp-http')) as unknown as typeof module;
  } catch {
    throw new CliError('export needs the optional peers @opentelemetry/exporter-trace-otlp-http and @opentelemetry/api: npm install @opentelemetry/api @opentelemetry/exporter-trace-otlp-http', 2);
  }
  return new module.OTLPTraceExporter({ url, headers });
};

const send = (exporter: OtlpExporter, spans: ExportableSpan[]): Promise<void> =>
  new Promise((resolve, reject) => {
    exporter.export(spans, (result) => (result.code === 0 ? resolve() : reject(result.error ?? new CliError('the OTLP exporter reported a failure without a reason', 1))));
  });

export const exportCommand = (program: Command): Command =>
  withCommonOptions(
    program
      .command('export')
      .description("send a recorded session's OpenTelemetry GenAI spans to a backend over OTLP/HTTP (Jaeger, Phoenix, Langfuse, …)")
      .argument('<session>', 'session id')
      .requiredOption('--otlp <url>', 'the OTLP/HTTP endpoint, e.g. http://localhost:4318 (the path /v1/traces is added when none is given)')
      .option('--header <name=value>', 'an HTTP header for the endpoint (repeatable), e.g. Authorization=Bearer …', collect, [])
      .option('--capture-content', 'include message content, tool arguments and results (off by default)')
      .option('--service-name <name>', 'the resource attribute service.name', 'context-ledger')
      .option('--provider <name>', 'gen_ai.provider.name (default: guessed from the model name)')
      .option('--batch <n>', 'spans per request', '512'),
  ).action(async (sessionId: string, options: ExportOptions) => {
    const url = tracesUrl(options.otlp ?? '');
    const headers = parseHeaders(options.header);
    const batch = Number(options.batch ?? '512');
    if (!Number.isSafeInteger(batch) || batch < 1) throw usage(`--batch must be a positive integer, got ${JSON.stringify(options.batch)}`);
    await withReadLedger(options, async ({ log }, out) => {
      await requireSession(log, sessionId, options.dir);
      const exporter = await loadExporter(url, headers);
      const reading = progressBar('export: reading');
      let records: SessionSpanRecord[];
      try {
        records = await sessionSpanRecords(log, sessionId, {
          ...(options.captureContent ? { captureContent: true } : {}),
          ...(options.provider !== undefined ? { provider: options.provider } : {}),
          onProgress: (seq, head) => reading.update(seq, head),
        });
      } finally {
        reading.finish();
      }
      const resource = { attributes: { 'service.name': options.serviceName } };
      const scope = { name: 'context-ledger' };
      const spans = records.map((r) => exportable(r, resource, scope));
      const sending = progressBar('export: sending');
      let sent = 0;
      try {
        for (let i = 0; i < spans.length; i += batch) {
          const part = spans.slice(i, i + batch);
          await send(exporter, part);
          sent += part.length;
          sending.update(sent, spans.length);
        }
      } catch (error) {
        throw new CliError(`export to ${url} failed after ${sent} of ${spans.length} spans were accepted: ${(error as Error).message}`, 1);
      } finally {
        sending.finish();
        await exporter.shutdown().catch(() => undefined);
      }
      const traces = new Set(records.map((r) => r.traceId)).size;
      if (out.json) out.data({ sessionId, url, spans: spans.length, traces, traceIds: [...new Set(records.map((r) => r.traceId))] });
      else out.line(`exported ${spans.length} spans in ${traces} trace(s) of ${sessionId} to ${url}`);
    });
  });
