// The files a doc names must be in the repository: relative links, repository paths (`src/log/store.ts`) and bare
// file names with an extension (`DESIGN.md`, `schemas.d.ts`). Pure over a document's text and the list of the
// repository's files, so it is tested on made-up docs (test/scripts/doc-mentions.test.ts); `npm run lint:docs`
// (scripts/check-doc-snippets.ts) runs it over every Markdown file a reader meets.
import { basename, dirname, relative, resolve } from 'node:path';

/**
 * Names with a file extension that are not files of this repository, and why a doc may still use them. Keep it short:
 * a name belongs here only when it is not meant as a file of the repository at all.
 */
export const NOT_REPOSITORY_FILES: ReadonlyMap<string, string> = new Map([
  ['console.log', "JavaScript's method, not a file"],
  ['schemas.d.ts', 'the declaration file the build wrote for src/events/schemas.ts (in dist/, not in the repository)'],
  // Test files of the peers' own repositories, whose cases test/bridges ports (docs/bridges.md names their origin).
  ['memorySession.test.ts', "a test file of openai/openai-agents-js"],
  ['historyMutations.test.ts', "a test file of openai/openai-agents-js"],
  ['session.test.ts', "a test file of openai/openai-agents-js"],
  ['run.approvalGuardrailSession.test.ts', "a test file of openai/openai-agents-js"],
  ['message_utils.test.ts', "a test file of langchain-ai/langchainjs (libs/langchain-core/src/messages/tests/)"],
]);

/** Every Markdown file a reader meets: README, CHANGELOG, docs/ (with decisions/ and api/), bench/ and examples/. */
export const markdownDocs = (files: readonly string[]): string[] =>
  files.filter((f) => f.endsWith('.md') && (/^(README|CHANGELOG)\.md$/.test(f) || /^(docs|bench|examples)\//.test(f)));

const TOP = '(?:src|test|test-integration|test-browser|test-pg|test-pack|property-tests|docs|scripts|bench|examples|api|bin|\\.ci)';
const PATH_MENTION = new RegExp(`(?<![\\w./-])(${TOP}/[\\w./*{},-]*[\\w/*}])`, 'g');
const UNDER_TOP = new RegExp(`^${TOP}/`);
const LINK = /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
/** The extensions of files (so `memory.compacted`, `e.g.` or `0.1.0` are not taken for file names). */
const EXTENSION = '(?:md|markdown|ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|ya?ml|sh|html?|css|png|jpe?g|gif|svg|txt|csv|sql|toml|lock|log|py|cfg|ini|xml|wasm|tgz|zip|pem)';
/** A file name with an extension, with the folders written before it: `DESIGN.md`, `../shared/data/x.json`. */
const FILE_NAME = new RegExp(`(?<![\\w./@-])((?:[\\w@.-]+/)*[\\w-][\\w.-]*\\.${EXTENSION})(?![\\w-]|\\.\\w)`, 'g');

/** The repository's files and folders, as `namesSomething` and `fileNameIsKnown` read them. */
export interface RepositoryFiles {
  readonly files: readonly string[];
  readonly folders: ReadonlySet<string>;
  readonly names: ReadonlySet<string>;
}

export const repositoryIndex = (files: readonly string[]): RepositoryFiles => ({
  files,
  folders: new Set(files.flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/')))),
  names: new Set(files.map((f) => basename(f))),
});

/** Whether `pattern` (a path, a folder, or a glob with `*`, `**` or `{a,b}`) names something in the repository. */
const namesSomething = (pattern: string, repo: RepositoryFiles): boolean => {
  const path = pattern.replace(/\/$/, '');
  if (!/[*{]/.test(path)) return repo.files.includes(path) || repo.folders.has(path);
  const source = path
    .replace(/[.+^$()|[\]\\]/g, '\\$&')
    .replace(/\{([^}]*)\}/g, (_, alternatives: string) => `(?:${alternatives.split(',').join('|')})`)
    .replace(/\*\*\/?/g, '\u0000')
    .replace(/\*/g, '[^/]*')
    .replace(/\u0000/g, '(?:.*/)?');
  const regex = new RegExp(`^${source}$`);
  return repo.files.some((f) => regex.test(f)) || [...repo.folders].some((f) => regex.test(f));
};

/**
 * Whether a file name a doc mentions is a file of the repository: a bare name when some file has that name, a name
 * with folders when it is a repository path or the end of one (`events/schemas.ts`), or the doc's own relative path.
 */
const fileNameIsKnown = (mention: string, doc: string, repo: RepositoryFiles): boolean => {
  if (NOT_REPOSITORY_FILES.has(mention) || NOT_REPOSITORY_FILES.has(basename(mention))) return true;
  // A capitalised name in .js is a library's or runtime's name (Node.js, LangChain.js), not a file of ours.
  if (/^[A-Z][A-Za-z]*\.js$/.test(mention)) return true;
  if (!mention.includes('/')) return repo.names.has(mention);
  const fromDoc = resolve('/', dirname(doc), mention).slice(1);
  const bare = mention.replace(/^(?:\.\.?\/)+/, '');
  return repo.files.some((f) => f === fromDoc || f === bare || f.endsWith(`/${bare}`));
};

/**
 * `doc:line: …` for each file `text` (the Markdown of `doc`, a path from the repository root) names that is not in the
 * repository: links, repository paths and file names with an extension, outside code blocks and outside code spans
 * with spaces (those are examples: an agent's files, an event's text, a command with its arguments).
 * @example mentionProblems('docs/a.md', 'See DESIGN.md.', repositoryIndex(['docs/a.md'])) // ['docs/a.md:1: names DESIGN.md, …']
 */
export const mentionProblems = (doc: string, text: string, repo: RepositoryFiles): string[] => {
  const problems: string[] = [];
  let fenced = false;
  text.split('\n').forEach((raw, i) => {
    if (/^\s*```/.test(raw)) fenced = !fenced;
    if (fenced) return;
    const line = raw.replace(/`[^`]*`/g, (span) => (/\s/.test(span) ? ' ' : span));
    for (const [, target] of line.matchAll(LINK)) {
      if (/^(https?:|mailto:|#)/.test(target!)) continue;
      const file = target!.split('#')[0]!;
      if (file === '') continue;
      const path = relative(resolve('/'), resolve('/', dirname(doc), decodeURIComponent(file)));
      if (!namesSomething(path, repo)) problems.push(`${doc}:${i + 1}: links to ${target}, which is not in the repository`);
    }
    // Links were checked above (their text is still read); a link to another site, or a bare address, names a file of that site.
    const prose = line
      .replace(/\[[^\]]*\]\(https?:[^)]*\)/g, ' ')
      .replace(/\]\([^)]*\)/g, ']')
      .replace(/https?:\/\/\S+/g, ' ');
    for (const [, mention] of prose.matchAll(PATH_MENTION)) {
      const path = mention!.replace(/[.,]+$/, '');
      // A path the text builds (`.tmp/…`, `dist/…`) or writes at run time is not a file of the repository.
      if (/\.\.\.|…|<|>/.test(path)) continue;
      if (!namesSomething(path, repo)) problems.push(`${doc}:${i + 1}: names ${path}, which is not in the repository`);
    }
    for (const [, mention] of prose.matchAll(FILE_NAME)) {
      // Repository paths were checked above.
      if (UNDER_TOP.test(mention!)) continue;
      if (!fileNameIsKnown(mention!, doc, repo)) problems.push(`${doc}:${i + 1}: names ${mention}, which is not in the repository (if it is not meant as a file of it, add it to NOT_REPOSITORY_FILES in scripts/doc-mentions.ts)`);
    }
  });
  return problems;
};
