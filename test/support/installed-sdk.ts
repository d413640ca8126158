// Which version of a package the tests run against: the lockfile's under `npm test`, another under the SDK matrix
// (scripts/sdk-matrix.ts installs each SDK's oldest and newest version into a copy of the project).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The installed version of a package (read from its package.json). */
export const installedVersion = (name: string): string => (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version;

/** The version package-lock.json installs for a package: the one `npm test` runs (the SDK matrix installs others). */
export const lockfileVersion = (name: string): string | undefined =>
  (JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as { packages: Record<string, { version?: string }> }).packages[`node_modules/${name}`]?.version;

/** Whether the installed version of a package is another than the lockfile's (the SDK matrix is running). */
export const otherThanLockfile = (name: string): boolean => installedVersion(name) !== lockfileVersion(name);
