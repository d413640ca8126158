// Public face of base: what every layer stands on (the errors, canonical JSON and digests, small helpers). Option
// parsing (zod) is imported by path, `./options.js`, so that the projection path never loads zod.
export * from './errors.js';
export { assertNever } from './assert-never.js';
export { canonicalJson, digestOf } from './canonical.js';
export { deepFreeze } from './deep-freeze.js';
export { errorText } from './error-text.js';
export { isRecord } from './is-record.js';
export { oneLine } from './one-line.js';
export { uniqueStrings } from './unique-strings.js';
export { LIBRARY_VERSION } from './version.js';
