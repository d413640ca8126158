#!/usr/bin/env node
// The context-ledger command. In a clone (src/ present and tsx installed) it runs the TypeScript source, so a
// stale dist/ never answers for the code you are reading; in the published package (no src/) it runs dist/.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'index.js');
const source = join(root, 'src', 'cli', 'index.ts');

let register;
if (existsSync(source)) {
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    // No tsx (dev dependencies not installed): fall back to the build below.
  }
}

if (register) {
  register();
  await import(pathToFileURL(source).href);
} else if (existsSync(built)) {
  await import(pathToFileURL(built).href);
} else {
  process.stderr.write('context-ledger: neither tsx (run `npm ci`) nor a build (run `npm run build`) is available\n');
  process.exit(2);
}
