// Redaction before append: the log's `redact` option, the built-in secretRedactor, and applying either to a batch.
import { isRecord, validateNewEvent, type NewSessionEvent } from '../events/index.js';
import * as E from 'fp-ts/lib/Either.js';
import { ContextLedgerError, InvalidOptionsError } from '../errors.js';

/** One replaced value: where in the event (dotted path from the payload) and which rule matched. Never the value. */
export interface Redaction {
  readonly path: string;
  readonly rule: string;
}

/** What a redactor returns: the event to store, and what it replaced. */
export interface RedactionResult {
  readonly event: NewSessionEvent;
  readonly redactions: readonly Redaction[];
}

/** The log's `redact` option: a function of the event as appended (validated, defaults filled). */
export type Redactor = (event: NewSessionEvent) => RedactionResult;

/** A rule for {@link secretRedactor}: a match (or its named group `secret`, when the pattern has one) becomes `[redacted:<name>]`. */
export interface RedactionRule {
  readonly name: string;
  readonly pattern: RegExp | string;
}

export interface SecretRedactorOptions {
  /** More rules, tried after the built-in ones. */
  readonly extra?: readonly RedactionRule[];
}

/**
 * The log's `redact` option threw, returned something that is not `{ event, redactions: [{ path, rule }] }`, changed
 * the event type, or made the event invalid; nothing of that append was written.
 */
export class RedactionError extends ContextLedgerError {
  static override readonly code = 'REDACTION_FAILED';
  constructor(
    readonly sessionId: string,
    /** Position of the event in the appended batch. */
    readonly index: number,
    readonly eventType: string | undefined,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`the redactor failed on event #${index}${eventType ? ` (${eventType})` : ''} of session ${JSON.stringify(sessionId)}: ${problem}; nothing was written`, options);
  }
}
/** @deprecated use RedactionError.isInstance */ export const isRedactionError = (e: unknown): e is RedactionError => RedactionError.isInstance(e);

const marker = (rule: string): string => `[redacted:${rule}]`;
const NOT_MARKED = '(?!\\[redacted:)';

/** The built-in rules, in the order they are tried (specific providers first, then the contextual ones). */
const BUILT_IN: readonly { readonly name: string; readonly pattern: RegExp }[] = [
  { name: 'private-key', pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----|$)/g },
  { name: 'anthropic-api-key', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { name: 'openai-api-key', pattern: /\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { name: 'aws-access-key-id', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  {
    name: 'aws-secret-access-key',
    pattern: new RegExp(
      `(?:[Aa][Ww][Ss]_?)?(?:SECRET_ACCESS_KEY|secret_access_key|[Ss]ecret[Aa]ccess[Kk]ey|SECRET_KEY|secret_key)["']?\\s*[:=]\\s*["']?(?<secret>${NOT_MARKED}[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])`,
      'g',
    ),
  },
  { name: 'github-token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { name: 'gitlab-token', pattern: /\bgl(?:pat|dt|ptt|rt)-[A-Za-z0-9_-]{20,}/g },
  { name: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}|https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9_/]+/g },
  { name: 'stripe-key', pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { name: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { name: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g },
  { name: 'authorization', pattern: new RegExp(`\\b(?:Bearer|Basic|Token)\\s+(?<secret>${NOT_MARKED}[A-Za-z0-9._~+/-]{8,}=*)`, 'gi') },
  { name: 'connection-string', pattern: new RegExp(`\\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\\s:/@'"]+:(?<secret>${NOT_MARKED}[^\\s@/'"]+)@`, 'g') },
  {
    name: 'env-secret',
    pattern: new RegExp(`^[ \\t]*(?:export[ \\t]+)?(?<name>[A-Za-z_][A-Za-z0-9_.-]*)[ \\t]*=[ \\t]*(?<secret>${NOT_MARKED}(?:"[^"\\n]*"|'[^'\\n]*'|[^\\s#'"][^\\n]*?))[ \\t]*\\r?$`, 'gm'),
  },
];

/** A name of an `.env` line says it holds a secret: one of its words is secret, token, password, key, … */
const SECRET_WORDS = /^(?:secret|secrets|token|tokens|password|passwd|pwd|pass|key|apikey|credential|credentials|auth|private)$/i;
const namesASecret = (name: string): boolean =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_.-]+/)
    .some((word) => SECRET_WORDS.test(word));

interface CompiledRule {
  readonly name: string;
  readonly pattern: RegExp;
  readonly grouped: boolean;
  readonly env: boolean;
  /** A cheap test that a string may hold a match (a superset; most strings fail it and are left alone). */
  readonly hint: Hint;
}

type Hint = (text: string) => boolean;

// Case-sensitive on purpose: lower-casing a long tool output, or a case-insensitive scan, costs more than the rules.
const AUTH_HINT = /(?:[Bb]earer|[Bb]asic|[Tt]oken|BEARER|BASIC|TOKEN)\s/;
const ENV_HINT = /(?:SECRET|TOKEN|PASS|PWD|KEY|AUTH|CREDENTIAL|PRIVATE|[Ss]ecret|[Tt]oken|[Pp]ass|[Pp]wd|[Kk]ey|[Aa]uth|[Cc]redential|[Pp]rivate)[A-Za-z0-9_.-]*[ \t]*=/;

const isNameChar = (code: number): boolean =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || code === 46 || code === 45;

/** Whether some `=` in the text follows a name that says secret (what the env-secret rule then checks in full). */
const envLineHint = (text: string): boolean => {
  for (let at = text.indexOf('='); at !== -1; at = text.indexOf('=', at + 1)) {
    let end = at;
    while (end > 0 && (text.charCodeAt(end - 1) === 32 || text.charCodeAt(end - 1) === 9)) end -= 1;
    let start = end;
    while (start > 0 && isNameChar(text.charCodeAt(start - 1))) start -= 1;
    if (start < end && ENV_HINT.test(text.slice(start, at + 1))) return true;
  }
  return false;
};

/** Hints of the built-in rules, by name: substrings every match has (the authorization and .env hints are looser than their rules' case-insensitive matching for mixed case; documented). */
const anyOf = (text: string, parts: readonly string[]): boolean => parts.some((part) => text.includes(part));
const HINTS: Readonly<Record<string, Hint>> = {
  'private-key': (t) => t.includes('PRIVATE KEY'),
  'anthropic-api-key': (t) => t.includes('sk-ant-'),
  'openai-api-key': (t) => t.includes('sk-'),
  'aws-access-key-id': (t) => anyOf(t, ['AKIA', 'ASIA', 'ABIA', 'ACCA']),
  'aws-secret-access-key': (t) => anyOf(t, ['SECRET_ACCESS_KEY', 'secret_access_key', 'ecretAccessKey', 'SECRET_KEY', 'secret_key']),
  'github-token': (t) => anyOf(t, ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_']),
  'gitlab-token': (t) => anyOf(t, ['glpat-', 'gldt-', 'glptt-', 'glrt-']),
  'slack-token': (t) => t.includes('xox') || t.includes('hooks.slack.com'),
  'stripe-key': (t) => t.includes('_live_') || t.includes('_test_'),
  'google-api-key': (t) => t.includes('AIza'),
  jwt: (t) => t.includes('eyJ'),
  authorization: (t) => AUTH_HINT.test(t),
  'connection-string': (t) => t.includes('://') && t.includes('@'),
  'env-secret': (t) => envLineHint(t),
};

const compile = (rule: RedactionRule, index: number): CompiledRule => {
  const issues: { path: string; message: string }[] = [];
  if (!isRecord(rule)) throw new InvalidOptionsError('secretRedactor', [{ path: `extra.${index}`, message: 'expected { name, pattern }' }]);
  if (typeof rule.name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(rule.name)) {
    issues.push({ path: `extra.${index}.name`, message: 'must be a name of letters, digits, _ . - (it is written as [redacted:<name>])' });
  }
  let pattern: RegExp | undefined;
  try {
    if (rule.pattern instanceof RegExp) pattern = new RegExp(rule.pattern.source, rule.pattern.flags.includes('g') ? rule.pattern.flags : `${rule.pattern.flags}g`);
    else if (typeof rule.pattern === 'string' && rule.pattern !== '') pattern = new RegExp(rule.pattern, 'g');
    else issues.push({ path: `extra.${index}.pattern`, message: 'must be a RegExp or a non-empty string' });
  } catch (cause) {
    issues.push({ path: `extra.${index}.pattern`, message: `is not a regular expression: ${(cause as Error).message}` });
  }
  if (pattern && pattern.test('')) issues.push({ path: `extra.${index}.pattern`, message: 'matches the empty string' });
  if (issues.length > 0 || !pattern) throw new InvalidOptionsError('secretRedactor', issues);
  pattern.lastIndex = 0;
  const test = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
  return { name: rule.name, pattern, grouped: pattern.source.includes('(?<secret>'), env: false, hint: (text) => test.test(text) };
};

const redactString = (text: string, rules: readonly CompiledRule[], path: string, out: Redaction[]): string => {
  if (text.length < 8) return text;
  let current = text;
  for (const rule of rules) {
    if (!rule.hint(current)) continue;
    rule.pattern.lastIndex = 0;
    if (!rule.pattern.test(current)) continue;
    rule.pattern.lastIndex = 0;
    let hit = false;
    current = current.replace(rule.pattern, (...args: unknown[]) => {
      const match = args[0] as string;
      const last = args[args.length - 1];
      const groups = (typeof last === 'object' && last !== null ? last : undefined) as Record<string, string | undefined> | undefined;
      if (match === '') return match;
      if (rule.env && !namesASecret(groups?.['name'] ?? '')) return match;
      const secret = rule.grouped ? groups?.['secret'] : match;
      if (secret === undefined || secret === '') return match;
      hit = true;
      if (!rule.grouped) return marker(rule.name);
      const at = match.lastIndexOf(secret);
      return match.slice(0, at) + marker(rule.name) + match.slice(at + secret.length);
    });
    if (hit) out.push({ path, rule: rule.name });
  }
  return current;
};

const redactValue = (value: unknown, rules: readonly CompiledRule[], path: string, out: Redaction[]): unknown => {
  if (typeof value === 'string') return redactString(value, rules, path, out);
  if (Array.isArray(value)) {
    let changed = false;
    const next = value.map((v, i) => {
      const r = redactValue(v, rules, path === '' ? String(i) : `${path}.${i}`, out);
      if (r !== v) changed = true;
      return r;
    });
    return changed ? next : value;
  }
  if (isRecord(value)) {
    let changed = false;
    const next: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const v = value[key];
      const r = redactValue(v, rules, path === '' ? key : `${path}.${key}`, out);
      if (r !== v) changed = true;
      next[key] = r;
    }
    return changed ? next : value;
  }
  return value;
};

/**
 * The built-in redactor: OpenAI, Anthropic, AWS (access key id and secret access key), GitHub, GitLab,
 * Slack, Stripe and Google API keys; private key blocks; JWTs; `Authorization: Bearer …` (and Basic,
 * Token); passwords in connection strings; `.env`-style `NAME=value` lines whose name says secret,
 * token, password or key; plus `extra` rules. Each match becomes `[redacted:<rule>]`. Deterministic
 * and idempotent (a marker is never matched again).
 * @example const log = await openLevelLog(dir, { redact: secretRedactor({ extra: [{ name: 'ticket', pattern: /TICKET-\d{6}/ }] }) })
 */
export const secretRedactor = (options: SecretRedactorOptions = {}): Redactor => {
  if (!isRecord(options)) throw new InvalidOptionsError('secretRedactor', [{ path: '', message: 'expected { extra? }' }]);
  const extra = options.extra ?? [];
  if (!Array.isArray(extra)) throw new InvalidOptionsError('secretRedactor', [{ path: 'extra', message: 'must be an array of { name, pattern }' }]);
  const rules: CompiledRule[] = [
    ...BUILT_IN.map((rule) => ({
      name: rule.name,
      pattern: rule.pattern,
      grouped: rule.pattern.source.includes('(?<secret>'),
      env: rule.name === 'env-secret',
      hint: HINTS[rule.name] ?? (() => true),
    })),
    ...extra.map(compile),
  ];
  const redactor: Redactor = (event) => {
    const redactions: Redaction[] = [];
    const source = event as unknown as Record<string, unknown>;
    const next: Record<string, unknown> = {};
    let changed = false;
    for (const key of Object.keys(source)) {
      const v = source[key];
      if (key === 'type') {
        next[key] = v;
        continue;
      }
      const r = redactValue(v, rules, key, redactions);
      if (r !== v) changed = true;
      next[key] = r;
    }
    return { event: (changed ? next : event) as NewSessionEvent, redactions };
  };
  BUILT_IN_REDACTORS.add(redactor);
  return redactor;
};

/** Redactors made by secretRedactor: they only replace strings by markers, so their events are re-validated only when changed. */
const BUILT_IN_REDACTORS = new WeakSet<Redactor>();

/** The `redact` log option, checked. */
export const redactOption = (value: unknown): Redactor | undefined => {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') {
    throw new InvalidOptionsError('the log', [{ path: 'redact', message: `must be a function (event) => { event, redactions } such as secretRedactor(), got ${typeof value}` }]);
  }
  return value as Redactor;
};

/**
 * Runs the redactor on each validated event of a batch: the events to store and their redactions (undefined
 * where none). A redactor that throws or returns a bad result, or an event it makes invalid, is a
 * RedactionError; the batch is then not written.
 */
export const redactBatch = (
  sessionId: string,
  redact: Redactor,
  events: readonly NewSessionEvent[],
): { events: NewSessionEvent[]; redactions: (readonly Redaction[] | undefined)[] } => {
  const trusted = BUILT_IN_REDACTORS.has(redact);
  const outEvents: NewSessionEvent[] = [];
  const outRedactions: (readonly Redaction[] | undefined)[] = [];
  events.forEach((event, index) => {
    const type = (event as { type?: unknown }).type as string | undefined;
    let result: RedactionResult;
    try {
      result = redact(event);
    } catch (cause) {
      throw new RedactionError(sessionId, index, type, `it threw: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    }
    if (!isRecord(result) || !isRecord(result.event) || !Array.isArray(result.redactions)) {
      throw new RedactionError(sessionId, index, type, 'it must return { event, redactions: [{ path, rule }] }');
    }
    const redactions: Redaction[] = [];
    for (const [i, r] of (result.redactions as unknown[]).entries()) {
      if (!isRecord(r) || typeof r['path'] !== 'string' || typeof r['rule'] !== 'string' || r['rule'] === '') {
        throw new RedactionError(sessionId, index, type, `redactions.${i} must be { path: string, rule: non-empty string }`);
      }
      redactions.push({ path: r['path'], rule: r['rule'] });
    }
    let stored = result.event;
    if (!trusted || (redactions.length > 0 && stored !== event)) {
      if (stored !== event || !trusted) {
        const copy = JSON.parse(JSON.stringify(stored)) as unknown;
        const checked = validateNewEvent(copy, index, sessionId);
        if (E.isLeft(checked)) throw new RedactionError(sessionId, index, type, `the redacted event is not valid: ${checked.left.message}`, { cause: checked.left });
        stored = checked.right;
      }
    }
    if ((stored as { type?: unknown }).type !== type) throw new RedactionError(sessionId, index, type, 'it changed the event type');
    outEvents.push(stored);
    outRedactions.push(redactions.length > 0 ? redactions : undefined);
  });
  return { events: outEvents, redactions: outRedactions };
};
