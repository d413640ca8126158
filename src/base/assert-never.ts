// assertNever: the default branch of a switch over a closed union, which the compiler proves unreachable.
import { InternalError } from './errors.js';

/** Throws {@link InternalError} naming the value that a switch over a closed union did not handle. */
export const assertNever = (value: never): never => {
  throw new InternalError(`unhandled event ${JSON.stringify(value)}`);
};
