// Options objects validated by zod: InvalidOptionsError names the component and each offending option's path.
import { z } from 'zod';
import type { EventIssue } from './errors.js';

const pathOf = (path: readonly PropertyKey[]): string => path.map((p) => (typeof p === 'symbol' ? p.toString() : String(p))).join('.');

const issuesOfOptions = (error: z.ZodError): EventIssue[] =>
  error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: pathOf([...issue.path, key]), message: 'unknown option' }))
      : [{ path: pathOf(issue.path), message: issue.message.replace(/^Invalid input: /, '') }],
  );

/**
 * Options handed to a constructor or factory (`Agents.react`, `LlmCompactPolicy`, `openSession`, …) that do not
 * match its schema: `where` names the component, `issues` each option's path and what is wrong.
 * @example try { Agents.react({ ...options, maxSteps: 0 }) } catch (e) { if (isInvalidOptionsError(e)) console.error(e.issues) }
 */
export class InvalidOptionsError extends TypeError {
  readonly _tag = 'InvalidOptionsError' as const;
  constructor(
    readonly where: string,
    readonly issues: readonly EventIssue[],
  ) {
    super(`invalid options for ${where}: ${issues.map((i) => `${i.path === '' ? '(root)' : i.path}: ${i.message}`).join('; ')}`);
    this.name = 'InvalidOptionsError';
  }
}

/** Whether `e` is an {@link InvalidOptionsError}. */
export const isInvalidOptionsError = (e: unknown): e is InvalidOptionsError => e instanceof InvalidOptionsError;

/**
 * Validates `value` against `schema` and returns it as parsed, or throws {@link InvalidOptionsError} naming `where`.
 * @example parseOptions(z.object({ maxItems: z.number().int() }), { maxItems: NaN }, 'MyPolicy') // throws "invalid options for MyPolicy: maxItems: expected number, received NaN"
 */
export const parseOptions = <S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> => {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new InvalidOptionsError(where, issuesOfOptions(parsed.error));
};

/** A value that must be a function (zod 4 has no function schema). */
export const functionOption = <T extends (...args: never[]) => unknown = (...args: never[]) => unknown>() =>
  z.custom<T>((value) => typeof value === 'function', { message: 'expected a function' });

/** An object with these methods (a client, a log, a projector, a policy): checked by shape, not class. */
export const objectWithMethods = <T>(what: string, ...methods: readonly string[]) =>
  z.custom<T>(
    (value) =>
      value !== null &&
      typeof value === 'object' &&
      methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function'),
    { message: `expected ${what} (an object with ${methods.map((m) => `${m}()`).join(', ')})` },
  );
