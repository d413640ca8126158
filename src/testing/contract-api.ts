// The two functions of a test runner that the published contract suites need (vitest, jest, node:test all fit).

/** `describe` and `it` of your test runner, e.g. `import { describe, it } from 'vitest'`. */
export interface ContractTestApi {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void> | void, timeout?: number): void;
}
