// lint:docs' check that the files a doc names are in the repository, on made-up docs and a made-up repository.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NOT_REPOSITORY_FILES, markdownDocs, mentionProblems, repositoryIndex } from '../../scripts/doc-mentions.js';

const repo = repositoryIndex(['README.md', 'docs/design.md', 'docs/guide.md', 'docs/api/context-ledger.md', 'src/events/schemas.ts', 'src/log/store.ts', 'package.json', 'docs/img/report.png']);
const check = (text: string, doc = 'docs/guide.md'): string[] => mentionProblems(doc, text, repo);

describe('mentionProblems', () => {
  it('names a bare file name with an extension that is not in the repository (a DESIGN.md cited in prose)', () => {
    expect(check('The laws are in DESIGN.md, see there.\nAnd in design.md.')).toEqual([
      'docs/guide.md:1: names DESIGN.md, which is not in the repository (if it is not meant as a file of it, add it to NOT_REPOSITORY_FILES in scripts/doc-mentions.ts)',
    ]);
    // In generated API pages and in the README as well, in link text, and in a code span without spaces.
    expect(check('Runs laws 2 to 7 of DESIGN.md against a projector.', 'docs/api/context-ledger__testing.md')).toHaveLength(1);
    expect(check('[DESIGN.md](docs/design.md) and `DESIGN.md`', 'README.md').map((p) => p.split(':').slice(0, 3).join(':'))).toEqual([
      'README.md:1: names DESIGN.md, which is not in the repository (if it is not meant as a file of it, add it to NOT_REPOSITORY_FILES in scripts/doc-mentions.ts)',
      'README.md:1: names DESIGN.md, which is not in the repository (if it is not meant as a file of it, add it to NOT_REPOSITORY_FILES in scripts/doc-mentions.ts)',
    ]);
  });

  it('accepts files of the repository: by name, by the end of their path, relative to the doc, and what the allow-list names', () => {
    expect(check('See design.md, package.json, report.png, schemas.ts and events/schemas.ts; ../README.md; ./api/context-ledger.md.')).toEqual([]);
    expect(check('LangChain.js and Node.js users call console.log; the build writes schemas.d.ts.')).toEqual([]);
    expect(NOT_REPOSITORY_FILES.get('schemas.d.ts')).toMatch(/dist/);
  });

  it('is not fooled by names that are not files: event types, versions, abbreviations, addresses', () => {
    expect(check('`memory.compacted` and model.requested, version 0.1.0, e.g. this, i.e. that, Node.js 20, docs.rs')).toEqual([]);
    expect(check('See https://github.com/peer/repo/blob/main/DESIGN.md and [their notes](https://example.com/NOTES.md).')).toEqual([]);
  });

  it('leaves examples alone: code blocks and code spans with spaces', () => {
    expect(check('```sh\ncat DESIGN.md\n```\nthen `context-ledger report demo --out report.html`')).toEqual([]);
  });

  it('names a path with folders that ends no repository file, and keeps the link and repository-path checks', () => {
    expect(check('Read ../shared/data/run.json first.')).toEqual([
      'docs/guide.md:1: names ../shared/data/run.json, which is not in the repository (if it is not meant as a file of it, add it to NOT_REPOSITORY_FILES in scripts/doc-mentions.ts)',
    ]);
    expect(check('[the laws](design.md#laws), [gone](gone.md), src/log/store.ts and src/log/gone.ts')).toEqual([
      'docs/guide.md:1: links to gone.md, which is not in the repository',
      'docs/guide.md:1: names src/log/gone.ts, which is not in the repository',
    ]);
  });
});

describe('the docs of this repository', () => {
  it('name no file that is not in it (what lint:docs checks)', () => {
    const root = resolve(fileURLToPath(import.meta.url), '../../..');
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' }).split('\n').filter((f) => f.length > 0);
    const index = repositoryIndex(files);
    const docs = markdownDocs(files);
    expect(docs).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/design.md', 'docs/api/context-ledger__testing.md']));
    expect(docs.flatMap((doc) => mentionProblems(doc, readFileSync(join(root, doc), 'utf8'), index))).toEqual([]);
  });
});
