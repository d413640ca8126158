// Options objects validated by zod: InvalidOptionsError names the component and each offending option's path.
import { z } from 'zod';
import { InvalidOptionsError } from './errors.js';
import type { ErrorIssue } from './errors.js';

const pathOf = (path: readonly PropertyKey[]): string => path.map((p) => (typeof p === 'symbol' ? p.toString() : String(p))).join('.');

const issuesOfOptions = (error: z.ZodError): ErrorIssue[] =>
  error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: pathOf([...issue.path, key]), message: 'unknown option' }))
      : [{ path: pathOf(issue.path), message: issue.message.replace(/^Invalid input: /, '') }],
  );

export { InvalidOptionsError, isInvalidOptionsError } from './errors.js';

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
