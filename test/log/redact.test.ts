// Redaction before append: every built-in rule, idempotence, extra rules, the option's checks, a redactor that throws.
import { describe, expect, it } from 'vitest';
import { isInvalidOptionsError } from '../../src/base/errors.js';
import type { NewSessionEvent } from '../../src/events/index.js';
import { isRedactionError, openMemoryLog, secretRedactor, type Redactor } from '../../src/log/index.js';
import { FAKE_CURL, FAKE_ENV_FILE, FAKE_KEY_FILE, secretValues } from '../support/fake-secrets.js';

const tool = (output: string): NewSessionEvent => ({ type: 'tool.result', callId: 'c1', output, isError: false }) as NewSessionEvent;
const outputOf = (event: unknown): string => (event as { output: string }).output;
const rejectionOf = async (promise: Promise<unknown>): Promise<unknown> => promise.then(() => { throw new Error('resolved'); }, (error: unknown) => error);

describe('secretRedactor', () => {
  const redact = secretRedactor();
  const all = FAKE_ENV_FILE + FAKE_KEY_FILE + FAKE_CURL;

  it('replaces every built-in kind with [redacted:<rule>] and lists each rule once per path; the rest of the text stays', () => {
    const { event, redactions } = redact(tool(all));
    const text = outputOf(event);
    for (const secret of secretValues()) expect(text.includes(secret), secret).toBe(false);
    expect(text).toContain('OPENAI_API_KEY=[redacted:openai-api-key]');
    expect(text).toContain('GOOGLE_API_KEY=[redacted:google-api-key]');
    expect(text).toContain('postgres://app:[redacted:connection-string]@db.internal:5432/app');
    expect(text).toContain('Authorization: Bearer [redacted:authorization]');
    expect(text).toContain('[redacted:private-key]');
    expect(text).toContain('DEBUG=true\nPORT=8080');
    expect(text).toContain('apiToken: not-a-line-this-rule-takes');
    expect(redactions.map((r) => r.rule).sort()).toEqual(
      ['anthropic-api-key', 'authorization', 'aws-access-key-id', 'aws-secret-access-key', 'connection-string', 'env-secret', 'github-token', 'gitlab-token', 'google-api-key', 'jwt', 'openai-api-key', 'private-key', 'slack-token', 'stripe-key'].sort(),
    );
    expect(redactions.every((r) => r.path === 'output')).toBe(true);
    expect(JSON.stringify(redactions).includes('sk-')).toBe(false);
  });

  it('is deterministic and idempotent: a second pass changes nothing and reports nothing', () => {
    const once = redact(tool(all));
    expect(redact(tool(all))).toEqual(once);
    const twice = redact(once.event);
    expect(twice.event).toEqual(once.event);
    expect(twice.redactions).toEqual([]);
  });

  it('leaves an event without secrets as the same object, and names nested paths', () => {
    const clean = tool('nothing to see: key=value is short prose');
    expect(redact(clean).event).toBe(clean);
    const nested = { type: 'user.input', items: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: `use ${secretValues()[0]}` }] }] } as NewSessionEvent;
    expect(redact(nested).redactions).toEqual([{ path: 'items.0.content.0.text', rule: 'openai-api-key' }]);
  });

  it('takes extra rules (a named group `secret` replaces only that part) and refuses bad ones', () => {
    const custom = secretRedactor({ extra: [{ name: 'ticket', pattern: /TICKET-\d{6}/ }, { name: 'pin', pattern: 'pin (?<secret>\\d{4})' }] });
    expect(outputOf(custom(tool('see TICKET-123456 and pin 1234')).event)).toBe('see [redacted:ticket] and pin [redacted:pin]');
    for (const bad of [{ name: '', pattern: /x/ }, { name: 'x', pattern: '' }, { name: 'x', pattern: '(' }, { name: 'x', pattern: /a*/ }]) {
      expect(isInvalidOptionsError((() => { try { secretRedactor({ extra: [bad as never] }); } catch (e) { return e; } return undefined; })())).toBe(true);
    }
  });
});

describe('the redact log option', () => {
  it('stores the redacted event with its redactions; append returns what read returns (live equals stored)', async () => {
    const log = await openMemoryLog({ redact: secretRedactor() });
    const appended = await log.append('s', [tool(FAKE_ENV_FILE), { type: 'user.input', items: [{ type: 'message', role: 'user', content: 'hi' }] }]);
    const read: unknown[] = [];
    for await (const e of log.read('s', { verify: true })) read.push(e);
    expect(read).toEqual(appended);
    expect(JSON.stringify(read)).toBe(JSON.stringify(appended));
    expect(appended[0]?.redactions?.length).toBeGreaterThan(0);
    expect(appended[1]?.redactions).toBeUndefined();
    expect(await log.verify('s')).toEqual({ valid: true, eventCount: 2, firstBrokenSeq: null });
  });

  it('a redactor that throws, returns garbage or breaks the event fails that append with RedactionError; nothing is written', async () => {
    const cases: Redactor[] = [
      () => { throw new Error('redactor down'); },
      () => 'nope' as never,
      (event) => ({ event, redactions: [{ path: 1, rule: '' }] as never }),
      (event) => ({ event: { ...event, output: 42 } as never, redactions: [] }),
      (event) => ({ event: { ...event, type: 'user.input' } as never, redactions: [] }),
    ];
    for (const redact of cases) {
      const log = await openMemoryLog({ redact });
      const error = await rejectionOf(log.append('s', [tool('x')]));
      expect(isRedactionError(error), String(error)).toBe(true);
      expect((error as Error).message).toMatch(/session "s".*nothing was written/);
      expect(await log.head('s')).toBe(0);
    }
    expect(isInvalidOptionsError(await rejectionOf(openMemoryLog({ redact: 'yes' as never })))).toBe(true);
  });

  it('a custom redactor: its result is validated and stored', async () => {
    const log = await openMemoryLog({ redact: (event) => ({ event: { ...event, output: 'masked' } as NewSessionEvent, redactions: [{ path: 'output', rule: 'mine' }] }) });
    const [stored] = await log.append('s', [tool('secret')]);
    expect(outputOf(stored)).toBe('masked');
    expect(stored?.redactions).toEqual([{ path: 'output', rule: 'mine' }]);
  });
});
