// The redactor's prefilter drops no secret: secretRedactor equals a straightforward application of every rule (each
// rule's pattern over the whole of every string, no prefilter) on random text with secrets of every kind planted
// anywhere, and the test has teeth: the same property with any one rule's anchor taken out of the prefilter fails.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NewSessionEvent } from '../src/events/index.js';
import { secretRedactor, type Redaction, type SecretRedactorOptions } from '../src/log/index.js';
import { builtInCandidates, isRegExpSpace, redactEvent, redactionRules, redactText, type CompiledRule } from '../src/log/redact.js';

// ------------------------------------------------------------------------------------------------ the reference

const SECRET_WORDS = /^(?:secret|secrets|token|tokens|password|passwd|pwd|pass|key|apikey|credential|credentials|auth|private)$/i;
const namesASecret = (name: string): boolean =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_.-]+/)
    .some((word) => SECRET_WORDS.test(word));

/**
 * Every rule over the whole text, in order, each on what the ones before left, and again while a pass changes
 * something (at most 8 passes); strings under 8 characters are left alone.
 */
const referenceText = (text: string, rules: readonly CompiledRule[]): { text: string; hits: string[] } => {
  const hits: string[] = [];
  if (text.length < 8) return { text, hits };
  let current = text;
  for (let pass = 0; pass < 8; pass++) {
    const before = current;
    for (const rule of rules) {
      const pattern = new RegExp(rule.pattern.source, rule.pattern.flags);
      let hit = false;
      current = current.replace(pattern, (...args: unknown[]) => {
        const match = args[0] as string;
        const last = args[args.length - 1];
        const groups = (typeof last === 'object' && last !== null ? last : {}) as Record<string, string | undefined>;
        if (match === '') return match;
        if (rule.name === 'env-secret' && !namesASecret(groups['name'] ?? '')) return match;
        const secret = rule.grouped ? groups['secret'] : match;
        if (secret === undefined || secret === '') return match;
        hit = true;
        const at = match.lastIndexOf(secret);
        return `${match.slice(0, at)}[redacted:${rule.name}]${match.slice(at + secret.length)}`;
      });
      if (hit && !hits.includes(rule.name)) hits.push(rule.name);
    }
    if (current === before) break;
  }
  return { text: current, hits };
};

/** Every string value of the event but its `type`, with the reference. */
const referenceEvent = (event: Record<string, unknown>, rules: readonly CompiledRule[]): { event: unknown; redactions: Redaction[] } => {
  const redactions: Redaction[] = [];
  const walk = (value: unknown, path: (string | number)[]): unknown => {
    if (typeof value === 'string') {
      const result = referenceText(value, rules);
      for (const rule of result.hits) redactions.push({ path: path.join('.'), rule });
      return result.text;
    }
    if (Array.isArray(value)) return value.map((item, index) => walk(item, [...path, index]));
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, [...path, key])]));
    return value;
  };
  return { event: Object.fromEntries(Object.entries(event).map(([key, value]) => [key, key === 'type' ? value : walk(value, [key])])), redactions };
};

// ------------------------------------------------------------------------------------------------ random text with secrets

const chars = (alphabet: string, minLength: number, maxLength: number): fc.Arbitrary<string> =>
  fc.array(fc.constantFrom(...alphabet), { minLength, maxLength }).map((list) => list.join(''));
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** What `\s` matches, the common ones more often. */
const SPACES = [' ', ' ', ' ', '\t', '\n', '\r', '\v', '\f', '\u00a0', '\u1680', '\u2000', '\u2009', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff'];
const spaces = (minLength: number, maxLength: number): fc.Arbitrary<string> => fc.array(fc.constantFrom(...SPACES), { minLength, maxLength }).map((list) => list.join(''));
const anyCase = (word: string): fc.Arbitrary<string> =>
  fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length }).map((upper) => [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
/** A secret word as a name spells it: lower, UPPER, Capitalized, or any case (which the env rule may not take). */
const nameWord = (word: string): fc.Arbitrary<string> =>
  fc.oneof(fc.constant(word), fc.constant(word.toUpperCase()), fc.constant(word[0]?.toUpperCase() + word.slice(1)), anyCase(word));

const privateKey = fc
  .tuple(fc.constantFrom('', 'RSA ', 'EC ', 'OPENSSH ', 'ENCRYPTED ', 'PGP ', 'DSA 2 '), fc.constantFrom('', ' BLOCK'), chars(`${ALNUM}+/=\n`, 0, 80), fc.boolean())
  .map(([kind, block, body, ended]) => `-----BEGIN ${kind}PRIVATE KEY${block}-----\n${body}${ended ? `\n-----END ${kind}PRIVATE KEY${block}-----` : ''}`);
const TOKEN_CHARS = `${ALNUM}_-`;
const SECRETS: Readonly<Record<string, fc.Arbitrary<string>>> = {
  'private-key': privateKey,
  'anthropic-api-key': chars(TOKEN_CHARS, 20, 60).map((rest) => `sk-ant-api03-${rest}`),
  'openai-api-key': fc.tuple(fc.constantFrom('', 'proj-', 'svcacct-', 'admin-'), chars(TOKEN_CHARS, 20, 60)).map(([kind, rest]) => `sk-${kind}${rest}`),
  'aws-access-key-id': fc.tuple(fc.constantFrom('AKIA', 'ASIA', 'ABIA', 'ACCA'), chars(UPPER_DIGITS, 16, 16)).map(([prefix, rest]) => prefix + rest),
  'aws-secret-access-key': fc
    .tuple(
      fc.constantFrom('AWS_SECRET_ACCESS_KEY', 'aws_secret_access_key', 'AWSSECRET_ACCESS_KEY', 'awsSecretAccessKey', 'SecretAccessKey', 'secretaccesskey', 'SECRET_KEY', 'secret_key', 'Aws_secret_key', 'MY_SECRET_KEY'),
      fc.constantFrom('', '"', "'"),
      spaces(0, 2),
      fc.constantFrom(':', '='),
      spaces(0, 2),
      fc.constantFrom('', '"', "'"),
      chars(`${ALNUM}/+=`, 40, 40),
    )
    .map((parts) => parts.join('')),
  'github-token': fc.oneof(
    fc.tuple(fc.constantFrom('p', 'o', 'u', 's', 'r'), chars(ALNUM, 36, 60)).map(([kind, rest]) => `gh${kind}_${rest}`),
    chars(`${ALNUM}_`, 22, 60).map((rest) => `github_pat_${rest}`),
  ),
  'gitlab-token': fc.tuple(fc.constantFrom('pat', 'dt', 'ptt', 'rt'), chars(TOKEN_CHARS, 20, 40)).map(([kind, rest]) => `gl${kind}-${rest}`),
  'slack-token': fc.oneof(
    fc.tuple(fc.constantFrom('a', 'b', 'p', 'o', 's', 'r'), chars(`${ALNUM}-`, 10, 40)).map(([kind, rest]) => `xox${kind}-${rest}`),
    chars(`${ALNUM}_/`, 1, 40).map((rest) => `https://hooks.slack.com/services/${rest}`),
  ),
  'stripe-key': fc.tuple(fc.constantFrom('sk', 'rk'), fc.constantFrom('live', 'test'), chars(ALNUM, 16, 40)).map(([kind, mode, rest]) => `${kind}_${mode}_${rest}`),
  'google-api-key': chars(`${ALNUM}_-`, 35, 35).map((rest) => `AIza${rest}`),
  jwt: fc.tuple(chars(TOKEN_CHARS, 5, 30), chars(TOKEN_CHARS, 5, 30), chars(TOKEN_CHARS, 0, 30)).map(([a, b, c]) => `eyJ${a}.eyJ${b}.${c}`),
  authorization: fc
    .tuple(fc.constantFrom('bearer', 'basic', 'token').chain(anyCase), spaces(1, 3), chars(`${ALNUM}._~+/-`, 8, 40), chars('=', 0, 2))
    .map((parts) => parts.join('')),
  'connection-string': fc
    .tuple(fc.constantFrom('postgres', 'mysql', 'redis', 'mongodb+srv', 'amqp', 'https', 'x1.y-z'), chars(`${ALNUM}._-`, 1, 12), chars(`${ALNUM}!#$%^&*()=:;.,~-ü`, 1, 20), chars(`${ALNUM}.-`, 1, 20))
    .map(([scheme, user, password, host]) => `${scheme}://${user}:${password}@${host}`),
  'env-secret': fc
    .tuple(
      fc.constantFrom('', '', '\n', '\r\n', '\r', '\u2028', '\u2029'),
      chars(' \t', 0, 3),
      fc.constantFrom('', '', 'export ', 'export\t'),
      fc.array(fc.constantFrom('API', 'db', 'My', 'service', 'X1', 'aws'), { maxLength: 2 }),
      fc.constantFrom('secret', 'secrets', 'token', 'tokens', 'password', 'passwd', 'pwd', 'pass', 'key', 'apikey', 'credential', 'credentials', 'auth', 'private').chain(nameWord),
      fc.constantFrom('_', '.', '-', ''),
      chars(' \t', 0, 2),
      chars(' \t', 0, 2),
      fc.oneof(chars(`${ALNUM} #:/-`, 1, 30), chars(`${ALNUM} '#`, 0, 20).map((v) => `"${v}"`), chars(`${ALNUM} "#`, 0, 20).map((v) => `'${v}'`)),
      fc.constantFrom('', ' ', '\t', '\r', ' #'),
    )
    .map(([line, indent, exported, words, word, join, beforeEquals, afterEquals, value, end]) => `${line}${indent}${exported}${[...words, word].join(join)}${beforeEquals}=${afterEquals}${value}${end}`),
};
/** Near misses: what looks like a secret to a prefilter but is not one (or only sometimes). */
const DECOYS = fc.constantFrom(
  'sk-short', 'task-runner', 'ghp_short', 'gh_', 'AKIA12345', 'AIza', 'eyJhbGci', 'eyJ.eyJ.', 'token: abc', 'Bearer x', 'basic functionality', 'BASIC   system',
  'KEY=', 'key = 1', '    self.key = value', 'sorted(key=len)', 'password = "x"', 'monkey=1', 'passed=3', 'author=me', '://host@x', 'user@example.com', 'http://a:b/c@d',
  '-----BEGIN PUBLIC KEY-----', 'PRIVATE  KEY', 'secret_key: short', 'SECRET_KEY = "test-key"', 'xoxb', 'glpat', 'sk_live', 'rk_test_x', 'hooks.slack.com', '[redacted:jwt]',
  '=====', '-----', '==', 'export', '\\n', '\\"', '"', "'", 'ünïcødé ✓ 日本語', '😀', '\u2028', 'TICKET-12345', 'pin 12',
);
const FILLER = fc.oneof(
  chars(`${ALNUM} \n\t.,:;=-_/'"()[]{}@#`, 0, 40),
  fc.string({ maxLength: 20, unit: 'binary' }),
  fc.constantFrom('const x = 1;', 'def f(a=1):', '    return value', '$ npm test', '<output>', 'PASSED tests/test_x.py::test_a', 'key', 'Token', 'BEARER'),
);
const EXTRA_SECRETS = fc.oneof(chars('0123456789', 6, 6).map((d) => `TICKET-${d}`), chars('0123456789', 4, 4).map((d) => `pin ${d}`));
const secret = fc.oneof(...Object.values(SECRETS), EXTRA_SECRETS);
const SEPARATORS = fc.constantFrom('', '', ' ', '\n', '\r\n', '\t', '=', ':', '"', "'", '/', '\u2028', 'x', '_', '-');

/** Secrets, decoys and filler in a random order and random separators (often none: secrets touch each other and the ends). */
const plain: fc.Arbitrary<string> = fc
  .array(fc.tuple(fc.oneof({ weight: 3, arbitrary: secret }, { weight: 2, arbitrary: DECOYS }, { weight: 3, arbitrary: FILLER }), SEPARATORS), { minLength: 1, maxLength: 12 })
  .map((pieces) => pieces.flat().join(''));
/** Plain text, or inside JSON text (escaped once or twice), as a tool's arguments or output carry it. */
const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: plain },
  { weight: 1, arbitrary: plain.map((t) => JSON.stringify({ command: t })) },
  { weight: 1, arbitrary: plain.map((t) => JSON.stringify(JSON.stringify(t))) },
  { weight: 1, arbitrary: secret },
);
/** A long tool output (tens of KiB) with a few secrets somewhere in it. */
const longText: fc.Arbitrary<string> = fc
  .tuple(fc.array(fc.tuple(fc.nat({ max: 400 }), text), { minLength: 1, maxLength: 4 }), fc.constantFrom('    x = foo(a=1, b="two")  # comment\n', 'PASSED tests/test_a.py::test_b\n', '=== 12 passed in 0.3s ===\n'))
  .map(([planted, line]) => {
    const lines: string[] = Array.from({ length: 400 }, () => line);
    for (const [at, secretText] of planted) lines.splice(at, 0, secretText);
    return lines.join('');
  });

const options: fc.Arbitrary<SecretRedactorOptions> = fc.constantFrom({}, { extra: [{ name: 'ticket', pattern: /TICKET-\d{6}/ }, { name: 'pin', pattern: 'pin (?<secret>\\d{4})' }] });

const sameAsReference = (candidates: (text: string) => number) =>
  fc.property(options, text, (opts, t) => {
    const rules = redactionRules(opts);
    const hits: string[] = [];
    const fast = redactText(t, rules, candidates, hits);
    const expected = referenceText(t, rules);
    return fast === expected.text && JSON.stringify(hits) === JSON.stringify(expected.hits);
  });

// ------------------------------------------------------------------------------------------------ properties

/** The global number of runs (100, or FC_NUM_RUNS) times `factor`. */
const runs = (factor: number): { numRuns: number } => ({ numRuns: Math.max(1, Math.round((fc.readConfigureGlobal().numRuns ?? 100) * factor)) });

describe('secretRedactor against every rule applied without its prefilter', () => {
  it('gives the same text and the same rules on random text with secrets of every kind anywhere', () => {
    fc.assert(sameAsReference(builtInCandidates), runs(4));
  });

  it('gives the same text and rules on long texts', () => {
    fc.assert(
      fc.property(options, longText, (opts, t) => {
        const rules = redactionRules(opts);
        const hits: string[] = [];
        const fast = redactText(t, rules, builtInCandidates, hits);
        const expected = referenceText(t, rules);
        expect(fast).toBe(expected.text);
        expect(hits).toEqual(expected.hits);
      }),
      runs(0.3),
    );
  });

  it('each rule whose bit the prefilter leaves clear matches nowhere in the text', () => {
    const rules = redactionRules();
    fc.assert(
      fc.property(text, (t) => {
        const found = builtInCandidates(t);
        rules.forEach((rule, index) => {
          if ((found & (1 << index)) === 0 && t.length >= 8) expect(referenceText(t, [rule]).hits, rule.name).toEqual([]);
        });
      }),
      runs(4),
    );
  });

  it('gives the same events and redactions on random events, and a second pass changes nothing', () => {
    const value: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        text,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('type', 'role', 'content', 'text', 'output', 'arguments', 'a.b', '__proto__', '0'), tie('value'), { maxKeys: 3, noNullPrototype: true }),
      ),
    })).value;
    const record = <T extends Record<string, fc.Arbitrary<unknown>>>(shape: T) => fc.record(shape, { noNullPrototype: true });
    const event = fc.oneof(
      record({ type: fc.constant('tool.result'), callId: text, output: text }),
      record({ type: fc.constant('user.input'), items: fc.array(record({ type: fc.constant('message'), role: fc.constant('user'), content: fc.oneof(text, fc.array(record({ type: fc.constant('input_text'), text }), { maxLength: 2 })) }), { maxLength: 2 }) }),
      record({ type: fc.constant('model.output'), items: fc.array(record({ type: fc.constant('function_call'), call_id: text, name: fc.constant('bash'), arguments: text.map((t) => JSON.stringify({ command: t })) }), { maxLength: 2 }) }),
      record({ type: text, payload: value }),
    );
    fc.assert(
      fc.property(options, event, (opts, e) => {
        const rules = redactionRules(opts);
        const redact = secretRedactor(opts);
        const once = redact(e as NewSessionEvent);
        const expected = referenceEvent(e, rules);
        expect(once.event).toStrictEqual(expected.event);
        expect(once.redactions).toEqual(expected.redactions);
        if (once.redactions.length === 0) expect(once.event).toBe(e);
        const twice = redact(once.event);
        expect(twice.redactions).toEqual([]);
        expect(twice.event).toBe(once.event);
      }),
      runs(2),
    );
  });

  it('has teeth: with any one rule taken out of the prefilter, the property fails', () => {
    const rules = redactionRules();
    for (let index = 0; index < rules.length; index++) {
      const without = (t: string): number => builtInCandidates(t) & ~(1 << index);
      const details = fc.check(sameAsReference(without), { numRuns: 400, seed: 22 + index, endOnFailure: true });
      expect(details.failed, `${rules[index]?.name}: the property did not notice the rule's anchor was gone`).toBe(true);
    }
  });

  it('redactEvent with the built-in prefilter is what secretRedactor() does', () => {
    const event = { type: 'tool.result', callId: 'c1', output: 'export API_TOKEN=abcdefgh\nAuthorization: Bearer abcdefgh12' } as NewSessionEvent;
    expect(secretRedactor()(event)).toEqual(redactEvent(event, redactionRules()));
  });

  it('the prefilter reads `\\s` as a regular expression does, for every UTF-16 code unit', () => {
    for (let code = 0; code < 0x10000; code++) {
      if (isRegExpSpace(code) !== /\s/.test(String.fromCharCode(code))) expect.fail(`code unit ${code.toString(16)}`);
    }
    expect(isRegExpSpace(-1)).toBe(false);
  });
});
