#!/usr/bin/env node
// The context-ledger command: runs the built CLI (dist/cli/index.js) when it exists, as in the published
// package; in a clone without a build, runs the TypeScript source through tsx (a dev dependency).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'index.js');

if (existsSync(built)) {
  await import(pathToFileURL(built).href);
} else {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    process.stderr.write('context-ledger: dist/ is not built and tsx is not installed: run `npm ci` (or `npm run build`)\n');
    process.exit(2);
  }
  register();
  await import(pathToFileURL(join(root, 'src', 'cli', 'index.ts')).href);
}
