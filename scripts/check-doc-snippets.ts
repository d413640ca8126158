// Type-checks every TypeScript code block of README.md and docs/*.md: each block becomes a module in .tmp/doc-snippets,
// `context-ledger` imports resolve to src/ through the package's "exports", and tsc runs strict over them all.
// Usage: npm run lint:docs
// A block whose first line is `// path/file.ts` is also written at that path (under .tmp), so another block can import it.
// The names the docs use for what a reader already has (log, modelClient, memory, tools, ...) are declared in PRELUDE.
// It also checks that every file a doc names (a relative link, a repository path such as `src/log/store.ts`, or a file
// name with an extension such as `design.md`) is in the repository (scripts/doc-mentions.ts), and that the API
// reference in docs/api/ and the error codes of docs/errors.md are what `npm run api:update` writes from the code.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleApiReference } from './api-reference.js';
import { markdownDocs, mentionProblems, repositoryIndex } from './doc-mentions.js';
import { errorsDocProblems } from './errors-doc.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.tmp', 'doc-snippets');

const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

interface Snippet {
  readonly doc: string;
  readonly line: number;
  readonly code: string;
}

/** What the docs assume the reader already has: declared, never defined. Library names must be imported by the blocks. */
const PRELUDE = `import type { AgentMemory, AgentOptions, AgentRunSession, CompactPolicy, ComponentDescription, ContextBudget, ContextProjection, ContextProjector, MemoryItem, ModelClient, SessionEventLog, Tokenizer, Tool, ToolContext, ToolSpec } from 'context-ledger';
declare global {
  const log: SessionEventLog;
  const modelClient: ModelClient;
  const memory: AgentMemory;
  const items: MemoryItem[];
  const tools: ToolSpec[];
  const session: AgentRunSession;
  const step: number;
  const options: AgentOptions;
  const bash: Tool;
  const runTests: Tool;
  const userIsTyping: boolean;
  const ui: { showCompaction(dropped: number, summary: string | null | undefined): void };
  function runInSandbox(command: string, context: ToolContext): Promise<string>;
  function runSuite(suite: string, options: { signal: AbortSignal }): Promise<{ passed: number; failed: number }>;
  const id: string;
  const description: ComponentDescription;
  const summarizer: ModelClient;
  class KeepLast implements ContextProjector {
    constructor(n: number, tokenizer: Tokenizer);
    project(items: readonly MemoryItem[], budget?: ContextBudget): ContextProjection;
    describe(): ComponentDescription;
  }
  class MyPolicy implements CompactPolicy {
    constructor(settings: Record<string, unknown>, summarizer: ModelClient | undefined);
    compact: CompactPolicy['compact'];
  }
}
export {};
`;

// ---------------------------------------------------------------------------------------------
// Files the docs name must exist (scripts/doc-mentions.ts).

/** The repository's files (tracked, and new ones not ignored), as paths from the root. */
const repositoryFiles = (): string[] =>
  execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' }).split('\n').filter((f) => f.length > 0 && existsSync(join(root, f)));

/** `doc:line: names X, which is not in the repository` for each missing file a doc names. */
const missingMentions = (): string[] => {
  const files = repositoryFiles();
  const repo = repositoryIndex(files);
  return markdownDocs(files).flatMap((doc) => mentionProblems(doc, readFileSync(join(root, doc), 'utf8'), repo));
};

const missing = missingMentions();
const staleReference = staleApiReference();
const problems = [
  ...missing,
  ...(staleReference.length > 0 ? [`docs/api/ is stale (${staleReference.join(', ')}): run \`npm run api:update\` and commit docs/api/`] : []),
  ...errorsDocProblems(),
];

const snippets: Snippet[] = [];
for (const doc of docs) {
  const lines = readFileSync(join(root, doc), 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(ts|typescript)(\s+.*)?$/.exec(lines[i]!);
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    if (!(open[2] ?? '').includes('no-check')) snippets.push({ doc, line: start + 1, code: lines.slice(start, end).join('\n') });
    i = end;
  }
}

// `context-ledger/x` → the source file its "exports" entry declares (types under dist/types mirror src/).
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { types?: string } | string> };
const paths: Record<string, string[]> = {};
for (const [key, value] of Object.entries(pkg.exports)) {
  if (typeof value !== 'object' || !value.types) continue;
  const source = value.types.replace(/^\.\/dist\/types\//, 'src/').replace(/\.d\.ts$/, '.ts');
  paths[key === '.' ? 'context-ledger' : `context-ledger/${key.slice(2)}`] = [relative(out, join(root, source))];
}

rmSync(out, { recursive: true, force: true });
rmSync(join(root, '.tmp', 'src'), { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const files: string[] = [];
const origin = new Map<string, Snippet>();
writeFileSync(join(out, 'prelude.d.ts'), PRELUDE);
files.push('prelude.d.ts');
for (const snippet of snippets) {
  const name = `${snippet.doc.replace(/[/.]/g, '_')}_${snippet.line}.ts`;
  // A module of its own, so names do not clash between blocks and top-level await is allowed.
  writeFileSync(join(out, name), `${snippet.code}\nexport {};\n`);
  files.push(name);
  origin.set(name, snippet);
  const path = /^\/\/ ((?:src|test)\/[\w./-]+\.ts)\s*$/.exec(snippet.code.split('\n')[0] ?? '')?.[1];
  if (path) {
    mkdirSync(dirname(join(root, '.tmp', path)), { recursive: true });
    writeFileSync(join(root, '.tmp', path), snippet.code);
  }
}
writeFileSync(
  join(out, 'tsconfig.json'),
  JSON.stringify(
    {
      extends: relative(out, join(root, 'tsconfig.json')),
      compilerOptions: { noEmit: true, baseUrl: '.', paths, noUnusedLocals: false, rootDir: relative(out, root) },
      include: files,
    },
    null,
    2,
  ),
);

try {
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(out, 'tsconfig.json')], { cwd: root, encoding: 'utf8', stdio: 'pipe' });
  console.log(`lint:docs: ${snippets.length} code block(s) in ${docs.length} file(s) type-check`);
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    console.error(`lint:docs: ${problems.length} problem(s) with the files the docs name, the API reference or the error codes (see above)`);
    process.exit(1);
  }
  console.log('lint:docs: every file the docs name is in the repository, and docs/api/ and docs/errors.md are current');
} catch (error) {
  const text = String((error as { stdout?: string }).stdout ?? error);
  // Point each error at the document and line it comes from.
  const mapped = text.replace(/(?:\.tmp\/doc-snippets\/)?([\w.-]+\.ts)\((\d+),(\d+)\)/g, (whole, file: string, line: string, col: string) => {
    const snippet = origin.get(file);
    return snippet ? `${snippet.doc}:${snippet.line + Number(line) - 1}:${col}` : whole;
  });
  console.error(mapped);
  for (const problem of problems) console.error(problem);
  console.error(`lint:docs: code blocks that do not type-check (see above)`);
  process.exit(1);
}
