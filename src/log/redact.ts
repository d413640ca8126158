// Redaction before append: the log's `redact` option, the built-in secretRedactor, and applying either to a batch.
import { validateNewEvent, type NewSessionEvent } from '../events/index.js';
import { isRecord } from '../base/index.js';
import * as E from 'fp-ts/lib/Either.js';
import { ContextLedgerError, InvalidOptionsError } from '../base/errors.js';

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

/** A rule as the redactor applies it. */
export interface CompiledRule {
  readonly name: string;
  readonly pattern: RegExp;
  /** The pattern has a named group `secret`: only that part is replaced. */
  readonly grouped: boolean;
  /** The env-secret rule: a match counts only when its `name` group says secret. */
  readonly env: boolean;
}

const builtInRule = (rule: { readonly name: string; readonly pattern: RegExp }): CompiledRule => ({
  name: rule.name,
  pattern: rule.pattern,
  grouped: rule.pattern.source.includes('(?<secret>'),
  env: rule.name === 'env-secret',
});
const BUILT_IN_RULES: readonly CompiledRule[] = BUILT_IN.map(builtInRule);

// ------------------------------------------------------------------------------------------------ the prefilter
//
// Most strings an agent records hold no secret, and running the 14 patterns over each of them cost more than half
// an append. The prefilter answers, per built-in rule, whether the rule can match anywhere in a text: a superset
// of where it matches, never less (property-tests/redaction.test.ts checks the redactor against every rule applied
// without it). It looks only for characters every match of a rule holds, with String#indexOf (a memchr in V8, far
// cheaper per character than a regular expression or a loop in JavaScript), and checks the few places it finds.

/** A built-in rule's bit: 1 << its index in BUILT_IN (the property tests fail if one is wrong). */
const bitOf = (name: string): number => 1 << BUILT_IN.findIndex((rule) => rule.name === name);
const PRIVATE_KEY = bitOf('private-key');
const ANTHROPIC = bitOf('anthropic-api-key');
const OPENAI = bitOf('openai-api-key');
const AWS_KEY_ID = bitOf('aws-access-key-id');
const AWS_SECRET = bitOf('aws-secret-access-key');
const GITHUB = bitOf('github-token');
const GITLAB = bitOf('gitlab-token');
const SLACK = bitOf('slack-token');
const STRIPE = bitOf('stripe-key');
const GOOGLE = bitOf('google-api-key');
const JWT = bitOf('jwt');
const AUTHORIZATION = bitOf('authorization');
const CONNECTION_STRING = bitOf('connection-string');
const ENV_SECRET = bitOf('env-secret');

// Character codes the prefilter compares: cA is 'A', ck is 'k'.
const charCode = (char: string): number => char.charCodeAt(0);
const [cA, cB, cC, cE, cI, cK, cS, cY, cUnderscore] = [charCode('A'), charCode('B'), charCode('C'), charCode('E'), charCode('I'), charCode('K'), charCode('S'), charCode('Y'), charCode('_')] as const;
const [ca, cc, ce, cg, ci, ck, cl, cn, co, cp, cr, cs, ct, cu, cx, cy, cz] = [charCode('a'), charCode('c'), charCode('e'), charCode('g'), charCode('i'), charCode('k'), charCode('l'), charCode('n'), charCode('o'), charCode('p'), charCode('r'), charCode('s'), charCode('t'), charCode('u'), charCode('x'), charCode('y'), charCode('z')] as const;
const [cSpace, cTab] = [charCode(' '), charCode('\t')] as const;

/** What `\s` matches in a JavaScript regular expression (WhiteSpace and LineTerminator); false for -1. */
export const isRegExpSpace = (code: number): boolean =>
  code === 32 ||
  (code >= 9 && code <= 13) ||
  (code >= 0xa0 &&
    (code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff));
/** Where `^` matches in a multiline regular expression: after \n, \r, U+2028, U+2029. */
const isLineTerminator = (code: number): boolean => code === 10 || code === 13 || code === 0x2028 || code === 0x2029;
/** `[A-Za-z0-9_.-]`, by character code below 128. */
const NAME_CHARS = new Uint8Array(128).map((_, code) => (/[A-Za-z0-9_.-]/.test(String.fromCharCode(code)) ? 1 : 0));
const isNameChar = (code: number): boolean => code < 128 && NAME_CHARS[code] === 1;

// The scans below read characters around each place indexOf found. They never read outside the text: charCodeAt
// out of bounds gives NaN, and V8 then deoptimizes the scan (it cost more than the scan itself). `codeAt` gives -1
// there. A letter in either case is `(code | 32) === lower` (ASCII only, as a case-insensitive RegExp without the u
// flag, which never folds another character into an ASCII letter).
const codeAt = (text: string, at: number): number => (at < text.length ? text.charCodeAt(at) : -1);
const isAlphanumeric = (code: number): boolean => (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
/** `[A-Za-z0-9._~+/-]`: a character of an authorization credential. */
const isCredentialChar = (code: number): boolean => isAlphanumeric(code) || code === 46 || code === 95 || code === 126 || code === 43 || code === 47 || code === 45;
/** `[A-Za-z0-9/+=]`: a character of an AWS secret access key. */
const isAwsSecretChar = (code: number): boolean => isAlphanumeric(code) || code === 47 || code === 43 || code === 61;
const isQuote = (code: number): boolean => code === 34 || code === 39;

/** The word at `at` in any case (`word` in lower case). */
const wordAt = (text: string, at: number, word: string): boolean => {
  for (let i = 0; i < word.length; i++) if ((codeAt(text, at + i) | 32) !== word.charCodeAt(i)) return false;
  return true;
};
/** At `from`: `\s+` then 8 credential characters (what follows `Bearer`, `Basic` or `Token` in a match). */
const credentialAt = (text: string, from: number): boolean => {
  let at = from;
  if (!isRegExpSpace(codeAt(text, at))) return false;
  while (isRegExpSpace(codeAt(text, at))) at += 1;
  const start = at;
  while (at - start < 8 && isCredentialChar(codeAt(text, at))) at += 1;
  return at - start >= 8;
};
/** `token` in any case with its `k` at `at` (the `e` after it checked), then a credential. */
const tokenAt = (text: string, at: number): boolean =>
  at >= 2 && (codeAt(text, at + 2) | 32) === cn && (text.charCodeAt(at - 1) | 32) === co && (text.charCodeAt(at - 2) | 32) === ct && credentialAt(text, at + 3);
/** `bearer` or `basic` in any case from its `b` at `at`, then a credential. */
const bearerOrBasicAt = (text: string, at: number): boolean => {
  const next = codeAt(text, at + 1) | 32;
  if (next === ce) return wordAt(text, at + 2, 'arer') && credentialAt(text, at + 6);
  return next === ca && wordAt(text, at + 2, 'sic') && credentialAt(text, at + 5);
};
/**
 * An AWS secret access key's name ends at `at` (its `key`, `Key` or `KEY` is before it, after `secret` or `SECRET`
 * in the 14 characters before that), then `["']?\s*[:=]\s*["']?` and 40 characters of a secret.
 */
const awsSecretAt = (text: string, at: number): boolean => {
  const name = text.slice(at < 17 ? 0 : at - 17, at - 3);
  if (!name.includes('ecret') && !name.includes('ECRET')) return false;
  let next = at;
  if (isQuote(codeAt(text, next))) next += 1;
  while (isRegExpSpace(codeAt(text, next))) next += 1;
  const separator = codeAt(text, next);
  if (separator !== 58 && separator !== 61) return false;
  next += 1;
  while (isRegExpSpace(codeAt(text, next))) next += 1;
  if (isQuote(codeAt(text, next))) next += 1;
  const start = next;
  while (next - start < 40 && isAwsSecretChar(codeAt(text, next))) next += 1;
  return next - start >= 40;
};
/** After the `://` at `at`: `user:password@` (what the connection-string rule needs after its scheme). */
const credentialsAt = (text: string, at: number): boolean => {
  let next = at + 3;
  for (let code = codeAt(text, next); code !== -1 && code !== 58 && code !== 47 && code !== 64 && !isQuote(code) && !isRegExpSpace(code); code = codeAt(text, next)) next += 1;
  if (next === at + 3 || codeAt(text, next) !== 58) return false;
  next += 1;
  const start = next;
  for (let code = codeAt(text, next); code !== -1 && code !== 47 && code !== 64 && !isQuote(code) && !isRegExpSpace(code); code = codeAt(text, next)) next += 1;
  return next > start && codeAt(text, next) === 64;
};
/** text[start, end) has secret, token, pass, pwd, key, credential, auth or private in it, in any case (every name namesASecret takes has). */
const hasSecretWordPart = (text: string, start: number, end: number): boolean => {
  for (let at = start; at < end - 2; at++) {
    switch (text.charCodeAt(at) | 32) {
      case cs:
        if (end - at >= 6 && wordAt(text, at, 'secret')) return true;
        break;
      case ct:
        if (end - at >= 5 && wordAt(text, at, 'token')) return true;
        break;
      case cp:
        if ((end - at >= 4 && wordAt(text, at, 'pass')) || wordAt(text, at, 'pwd') || (end - at >= 7 && wordAt(text, at, 'private'))) return true;
        break;
      case ck:
        if (wordAt(text, at, 'key')) return true;
        break;
      case cc:
        if (end - at >= 10 && wordAt(text, at, 'credential')) return true;
        break;
      case ca:
        if (end - at >= 4 && wordAt(text, at, 'auth')) return true;
        break;
    }
  }
  return false;
};
/** The `=` at `at` ends an `.env`-style line's name (at the start of a line, or after `export`) that says secret. */
const envNameAt = (text: string, at: number): boolean => {
  let before = at - 1;
  let code = before >= 0 ? text.charCodeAt(before) : -1;
  while (code === cSpace || code === cTab) code = --before >= 0 ? text.charCodeAt(before) : -1;
  const end = before + 1;
  while (code >= 0 && code < 128 && NAME_CHARS[code] === 1) code = --before >= 0 ? text.charCodeAt(before) : -1;
  const start = before + 1;
  if (start === end) return false;
  while (code === cSpace || code === cTab) code = --before >= 0 ? text.charCodeAt(before) : -1;
  if (!(code === -1 || isLineTerminator(code) || (code === ct && before + 1 < start && before >= 5 && text.startsWith('expor', before - 5)))) return false;
  return hasSecretWordPart(text, start, end) && namesASecret(text.slice(start, end));
};

/** `-`: `sk-` (openai, anthropic), `gl(pat|dt|ptt|rt)-` (gitlab), `xox?-` (slack). */
const scanDashes = (text: string): number => {
  let found = 0;
  for (let at = text.indexOf('-', 2); at !== -1; at = text.indexOf('-', at + 1)) {
    const before = text.charCodeAt(at - 1);
    if (before === ck) {
      if (text.charCodeAt(at - 2) === cs) found |= OPENAI | ANTHROPIC;
    } else if (before === ct) {
      if (at >= 4 && ((text.charCodeAt(at - 4) === cg && text.charCodeAt(at - 3) === cl) || (at >= 5 && text.charCodeAt(at - 5) === cg && text.charCodeAt(at - 4) === cl))) found |= GITLAB;
    } else if (at >= 4 && text.charCodeAt(at - 2) === cx && text.charCodeAt(at - 3) === co && text.charCodeAt(at - 4) === cx) found |= SLACK;
    while (codeAt(text, at + 1) === 45) at += 1;
  }
  return found;
};

/** `k`: `[sr]k_live_`, `[sr]k_test_` (stripe), `token` (authorization), `key` (aws-secret-access-key), `hooks.slack.com/services/` (slack). */
const scanLowerK = (text: string): number => {
  let found = 0;
  for (let at = text.indexOf('k'); at !== -1; at = text.indexOf('k', at + 1)) {
    const next = codeAt(text, at + 1);
    if (next === cUnderscore) {
      if (at >= 1 && (text.charCodeAt(at - 1) === cs || text.charCodeAt(at - 1) === cr) && (text.startsWith('_live_', at + 1) || text.startsWith('_test_', at + 1))) found |= STRIPE;
    } else if ((next | 32) === ce) {
      if (tokenAt(text, at)) found |= AUTHORIZATION;
      if (next === ce && codeAt(text, at + 2) === cy && awsSecretAt(text, at + 3)) found |= AWS_SECRET;
    } else if (next === cs && at >= 3 && text.charCodeAt(at - 1) === co && text.startsWith('hooks.slack.com/services/', at - 3)) found |= SLACK;
  }
  return found;
};

/** `K`: `token` (authorization), `Key` or `KEY` (aws-secret-access-key), `PRIVATE KEY` (private-key). */
const scanUpperK = (text: string): number => {
  let found = 0;
  for (let at = text.indexOf('K'); at !== -1; at = text.indexOf('K', at + 1)) {
    const next = codeAt(text, at + 1);
    if ((next | 32) !== ce) continue;
    if (tokenAt(text, at)) found |= AUTHORIZATION;
    const third = codeAt(text, at + 2);
    if ((next === ce && third === cy) || (next === cE && third === cY)) {
      if (awsSecretAt(text, at + 3)) found |= AWS_SECRET;
      if (at >= 8 && text.startsWith('PRIVATE ', at - 8)) found |= PRIVATE_KEY;
    }
  }
  return found;
};

/** `b` and `B`: `bearer`, `basic` (authorization); `github_pat_` (github). */
const scanB = (text: string): number => {
  let found = 0;
  for (let at = text.indexOf('b'); at !== -1; at = text.indexOf('b', at + 1)) {
    if (bearerOrBasicAt(text, at)) found |= AUTHORIZATION;
    else if (at >= 5 && codeAt(text, at + 1) === cUnderscore && text.startsWith('github_pat_', at - 5)) found |= GITHUB;
  }
  if ((found & AUTHORIZATION) === 0) {
    for (let at = text.indexOf('B'); at !== -1; at = text.indexOf('B', at + 1)) {
      if (bearerOrBasicAt(text, at)) return found | AUTHORIZATION;
    }
  }
  return found;
};

/** `A`: `AKIA`, `ASIA`, `ABIA`, `ACCA` (aws-access-key-id), `AIza` (google). */
const scanUpperA = (text: string): number => {
  let found = 0;
  for (let at = text.indexOf('A'); at !== -1 && at + 3 < text.length; at = text.indexOf('A', at + 1)) {
    const c1 = text.charCodeAt(at + 1);
    const c2 = text.charCodeAt(at + 2);
    const c3 = text.charCodeAt(at + 3);
    if (c2 === cI && c3 === cA && (c1 === cK || c1 === cS || c1 === cB)) found |= AWS_KEY_ID;
    else if (c1 === cC && c2 === cC && c3 === cA) found |= AWS_KEY_ID;
    else if (c1 === cI && c2 === cz && c3 === ca) found |= GOOGLE;
  }
  return found;
};

/** `eyJ` (jwt), `gh[pousr]_` (github), `://user:password@` (connection-string). */
const scanRest = (text: string): number => {
  let found = 0;
  for (let at = text.indexOf('J', 2); at !== -1; at = text.indexOf('J', at + 1)) {
    if (text.charCodeAt(at - 1) === cy && text.charCodeAt(at - 2) === ce) {
      found |= JWT;
      break;
    }
  }
  for (let at = text.indexOf('gh'); at !== -1; at = text.indexOf('gh', at + 1)) {
    const kind = codeAt(text, at + 2);
    if ((kind === cp || kind === co || kind === cu || kind === cs || kind === cr) && codeAt(text, at + 3) === cUnderscore) {
      found |= GITHUB;
      break;
    }
  }
  if (text.indexOf('@') !== -1) {
    for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', at + 1)) {
      if (credentialsAt(text, at)) {
        found |= CONNECTION_STRING;
        break;
      }
    }
  }
  return found;
};

/** `=` after a name that says secret (env-secret). */
const scanEquals = (text: string): number => {
  for (let at = text.indexOf('='); at !== -1; at = text.indexOf('=', at + 1)) {
    if (envNameAt(text, at)) return ENV_SECRET;
    while (codeAt(text, at + 1) === 61) at += 1;
  }
  return 0;
};

/**
 * The built-in rules that may match in a text, as bits (1 << the rule's index in BUILT_IN): a rule whose bit is
 * clear matches nowhere in the text. Each rule's characters, and the scan that looks for them: private-key
 * `PRIVATE KEY`; anthropic and openai `sk-`; aws-access-key-id `AKIA ASIA ABIA ACCA`; aws-secret-access-key
 * `[Kk]ey|KEY` after `ecret|ECRET`, then `:` or `=` and 40 characters; github `gh[pousr]_`, `github_pat_`; gitlab
 * `gl…-`; slack `xox?-`, `hooks.slack.com/services/`; stripe `[sr]k_live_`, `[sr]k_test_`; google `AIza`; jwt `eyJ`;
 * authorization `bearer`, `basic`, `token` in any case, then a space and 8 characters; connection-string
 * `://user:password@`; env-secret a name that says secret before `=`, at the start of a line or after `export`.
 */
export const builtInCandidates = (text: string): number =>
  scanDashes(text) | scanLowerK(text) | scanUpperK(text) | scanB(text) | scanUpperA(text) | scanRest(text) | scanEquals(text);

// ------------------------------------------------------------------------------------------------ applying rules

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
  return { name: rule.name, pattern, grouped: pattern.source.includes('(?<secret>'), env: false };
};

/** The rules of `secretRedactor(options)`, in the order they are tried: the built-in ones, then `extra`. */
export const redactionRules = (options: SecretRedactorOptions = {}): readonly CompiledRule[] => {
  if (!isRecord(options)) throw new InvalidOptionsError('secretRedactor', [{ path: '', message: 'expected { extra? }' }]);
  const extra = options.extra ?? [];
  if (!Array.isArray(extra)) throw new InvalidOptionsError('secretRedactor', [{ path: 'extra', message: 'must be an array of { name, pattern }' }]);
  return [...BUILT_IN_RULES, ...extra.map(compile)];
};

/** One rule over a text: every match replaced by its marker (only its `secret` group, when it has one); undefined when nothing was. */
export const applyRule = (text: string, rule: CompiledRule): string | undefined => {
  rule.pattern.lastIndex = 0;
  let hit = false;
  const next = text.replace(rule.pattern, (...args: unknown[]) => {
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
  return hit ? next : undefined;
};

/** Texts shorter than this are left alone. */
const MIN_LENGTH = 8;
/** Passes over one text at most (see redactText); only an `extra` rule that matches markers needs more. */
const MAX_PASSES = 8;

/**
 * A text redacted: the rules in order, each over what the ones before left, each rule's name added to `hits` (once)
 * when it replaced something. A built-in rule is run only when its bit in `candidates` of the text as it is then is
 * set (elsewhere it matches nowhere): most texts run none. The `extra` rules always run. A pass that replaced
 * something is followed by another, until one replaces nothing: a marker can complete what an earlier rule's pattern
 * looks for around a secret (an AWS secret key directly followed by a Slack webhook URL is a match only once the
 * URL is a marker), and redacting the result again must change nothing.
 */
export const redactText = (text: string, rules: readonly CompiledRule[], candidates: (text: string) => number, hits: string[]): string => {
  if (text.length < MIN_LENGTH) return text;
  let current = text;
  let found = candidates(text);
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    let changed = false;
    for (let index = found === 0 ? BUILT_IN_RULES.length : 0; index < rules.length; index++) {
      const rule = rules[index] as CompiledRule;
      if (index < BUILT_IN_RULES.length && (found & (1 << index)) === 0) continue;
      const next = applyRule(current, rule);
      if (next === undefined) continue;
      current = next;
      changed = true;
      if (!hits.includes(rule.name)) hits.push(rule.name);
      found = candidates(current);
    }
    if (!changed) break;
  }
  return current;
};

/** One event's walk: the rules, where it is (the keys and indexes from the payload), what it replaced so far. */
interface Walk {
  readonly rules: readonly CompiledRule[];
  readonly candidates: (text: string) => number;
  readonly path: (string | number)[];
  readonly redactions: Redaction[];
  /** The rules that replaced something in the current string (reused for every string). */
  readonly hits: string[];
}

const redactValue = (value: unknown, walk: Walk): unknown => {
  if (typeof value === 'string') {
    if (value.length < MIN_LENGTH) return value;
    const next = redactText(value, walk.rules, walk.candidates, walk.hits);
    if (walk.hits.length > 0) {
      const path = walk.path.join('.');
      for (const rule of walk.hits) walk.redactions.push({ path, rule });
      walk.hits.length = 0;
    }
    return next;
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      walk.path.push(index);
      const next = redactValue(item, walk);
      walk.path.pop();
      if (next !== item) {
        copy ??= value.slice();
        copy[index] = next;
      }
    }
    return copy ?? value;
  }
  if (isRecord(value)) return redactRecord(value, walk, undefined);
  return value;
};

/**
 * A record with its string values redacted (but `skip`'s): the same object when nothing changed, else a copy with
 * the keys in order (made with Object.fromEntries, so an own `__proto__` key stays a key).
 */
const redactRecord = (value: Record<string, unknown>, walk: Walk, skip: string | undefined): Record<string, unknown> => {
  let entries: [string, unknown][] | undefined;
  const keys = Object.keys(value);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    const item = value[key];
    let next = item;
    if (key !== skip) {
      walk.path.push(key);
      next = redactValue(item, walk);
      walk.path.pop();
    }
    if (entries) entries.push([key, next]);
    else if (next !== item) {
      entries = [];
      for (let before = 0; before < index; before++) entries.push([keys[before] as string, value[keys[before] as string]]);
      entries.push([key, next]);
    }
  }
  return entries ? Object.fromEntries(entries) : value;
};

/**
 * An event redacted with these rules: every string value but the top-level `type`, walked in place (nothing is
 * copied unless something is replaced, and then only the objects and arrays on the way to it).
 */
export const redactEvent = (event: NewSessionEvent, rules: readonly CompiledRule[], candidates: (text: string) => number = builtInCandidates): RedactionResult => {
  const walk: Walk = { rules, candidates, path: [], redactions: [], hits: [] };
  const next = redactRecord(event as unknown as Record<string, unknown>, walk, 'type');
  return { event: next as unknown as NewSessionEvent, redactions: walk.redactions };
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
  const rules = redactionRules(options);
  const redactor: Redactor = (event) => redactEvent(event, rules);
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
