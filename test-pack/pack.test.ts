// The package as users get it: build, `npm pack`, install the tarball into a fresh project, import and type-check.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'cl-pack-'));
const run = (cmd: string, args: string[], cwd: string): string =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' } });

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm pack', () => {
  it('installs into a fresh project, imports both entry points and type-checks a user file', () => {
    run('npm', ['run', 'build', '--silent'], root);
    run('npm', ['pack', '--silent', '--pack-destination', work], root);
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();

    const project = join(work, 'user-project');
    run('mkdir', ['-p', project], work);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }));
    const devDeps = JSON.parse(run('node', ['-p', 'JSON.stringify(require("./package.json").devDependencies)'], root)) as Record<string, string>;
    run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, tarball!), `fast-check@${devDeps['fast-check']}`, `@types/node@${devDeps['@types/node']}`],
      project,
    );

    writeFileSync(
      join(project, 'user.ts'),
      `import { openMemoryLog, foldMemory, userMessage, InMemoryAgentMemory, type SessionEvent, type MemoryItem } from 'context-ledger';
import * as testing from 'context-ledger/testing';
import { DefaultContextProjector, type ContextBudget, type ContextReport } from 'context-ledger/context';

const log = await openMemoryLog();
const stored: readonly SessionEvent[] = await log.append('s', [{ type: 'user.input', items: [userMessage('hi')] }], { expectedSeq: 0 });
const items: readonly MemoryItem[] = foldMemory(stored).entries.map((e) => e.item);
const memory = new InMemoryAgentMemory();
await memory.addUserInput('hello');
const n: number = memory.getItems().length;
const budget: ContextBudget = { maxItems: 1 };
const report: ContextReport = new DefaultContextProjector().project(items, budget).report;
console.log(JSON.stringify({ items: items.length, n, testing: Object.keys(testing).length > 0, sent: report.projectedItemCount }));
`,
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          types: ['node'],
          skipLibCheck: false,
        },
        include: ['user.ts'],
      }),
    );
    run(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], project);

    // And it runs: compile-free, the same code as plain JS.
    writeFileSync(
      join(project, 'user.mjs'),
      `import { openMemoryLog, foldMemory, userMessage } from 'context-ledger';
import * as testing from 'context-ledger/testing';
import * as adapters from 'context-ledger/adapters';
import * as openAiAdapters from 'context-ledger/adapters/openai';
import * as anthropicAdapters from 'context-ledger/adapters/anthropic';
import * as otel from 'context-ledger/otel';
import * as context from 'context-ledger/context';
const log = await openMemoryLog();
const stored = await log.append('s', [{ type: 'user.input', items: [userMessage('hi')] }], { expectedSeq: 0 });
const projection = new context.DefaultContextProjector().project([context.userMessage('a'), context.userMessage('b')], { maxItems: 1 });
console.log(JSON.stringify({ items: foldMemory(stored).entries.length, testing: Object.keys(testing).sort(), adapters: Object.keys(adapters).sort(), split: [...new Set([...Object.keys(openAiAdapters), ...Object.keys(anthropicAdapters)])].sort(), otel: Object.keys(otel).sort(), context: Object.keys(context).sort(), sent: projection.items.length, chars: projection.report.sourceApproxChars === context.approxChars([context.userMessage('a'), context.userMessage('b')]) }));
`,
    );
    const out = JSON.parse(run('node', ['user.mjs'], project)) as { items: number; testing: string[]; adapters: string[]; split: string[]; otel: string[]; context: string[]; sent: number; chars: boolean };
    expect(out.items).toBe(1);
    expect(out.testing).toEqual(expect.arrayContaining(['arbitraryItems', 'checkProjectorLaws', 'checkSessionLaws']));
    // The adapters import the SDKs as types only, so the entry loads without openai or @anthropic-ai/sdk installed.
    expect(out.adapters).toEqual(expect.arrayContaining(['anthropicMessagesClient', 'openAiChatCompletionsClient', 'openAiResponsesClient']));
    // context-ledger/adapters/openai and /anthropic are the same adapters, one SDK each; /adapters re-exports both
    expect(out.split).toEqual(out.adapters);
    // context-ledger/otel loads without @opentelemetry/api installed (an optional peer, loaded on first use).
    expect(out.otel).toEqual(expect.arrayContaining(['exportSessionSpans', 'ledgerIdGenerator', 'otelRecorder']));
    // context-ledger/context: the projection path alone (no zod schemas), from the packed build.
    expect(out.context).toEqual(expect.arrayContaining(['DefaultContextProjector', 'openAiTokenizer', 'parseContextBudget', 'userMessage']));
    expect(out.context).not.toContain('ContextBudgetSchema');
    expect({ sent: out.sent, chars: out.chars }).toEqual({ sent: 1, chars: true });
  }, 300_000);
});
