// The package as users get it: build, `npm pack`, install the tarball into a fresh project, import and type-check.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'cl-pack-'));
const run = (cmd: string, args: string[], cwd: string): string => {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' } });
  } catch (error) {
    // the command's own output says what failed (tsc's errors are on stdout)
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}${stderr ?? ''}`);
  }
};

afterAll(() => rmSync(work, { recursive: true, force: true }));

let tarball: string | undefined;
beforeAll(() => {
  run('npm', ['run', 'build', '--silent'], root);
  run('npm', ['pack', '--silent', '--pack-destination', work], root);
  tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
}, 300_000);

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string>; devDependencies: Record<string, string> };

/** The SDK peers, each at the oldest version of its peer range (its first alternative's lower bound) or the newest (its last alternative). */
const sdkPeers = ['openai', '@anthropic-ai/sdk', 'ai', '@openai/agents', '@langchain/core'];
const sdkSpecs = (end: 'oldest' | 'newest'): string[] =>
  sdkPeers.map((name) => {
    const alternatives = pkg.peerDependencies[name]!.split('||').map((r) => r.trim());
    const first = alternatives[0]!;
    if (end === 'oldest' && !/^\^\d+\.\d+\.\d+$/.test(first)) throw new Error(`${name}: the first alternative of its peer range (${first}) is not ^x.y.z`);
    return end === 'oldest' ? `${name}@${first.slice(1)}` : `${name}@${alternatives.at(-1)!}`;
  });

describe('npm pack', () => {
  it('installs into a fresh project, imports both entry points and type-checks a user file', () => {
    expect(tarball).toBeDefined();

    const project = join(work, 'user-project');
    run('mkdir', ['-p', project], work);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }));
    const devDeps = pkg.devDependencies;
    run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, tarball!), `fast-check@${devDeps['fast-check']}`, `@types/node@${devDeps['@types/node']}`],
      project,
    );

    writeFileSync(
      join(project, 'user.ts'),
      `import { openMemoryLog, foldMemory, userMessage, InMemoryAgentMemory, LogInUseError, type SessionEvent, type MemoryItem } from 'context-ledger';
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
const failure: unknown = new LogInUseError('/x');
const code: 'LOG_IN_USE' = LogInUseError.code;
const path: string = LogInUseError.isInstance(failure) ? failure.path : '';
console.log(JSON.stringify({ items: items.length, n, testing: Object.keys(testing).length > 0, sent: report.projectedItemCount, code, path }));
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
import * as root from 'context-ledger';
import * as testing from 'context-ledger/testing';
import * as adapters from 'context-ledger/adapters';
import * as openAiAdapters from 'context-ledger/adapters/openai';
import * as anthropicAdapters from 'context-ledger/adapters/anthropic';
import * as otel from 'context-ledger/otel';
import * as context from 'context-ledger/context';
const log = await openMemoryLog();
const stored = await log.append('s', [{ type: 'user.input', items: [userMessage('hi')] }], { expectedSeq: 0 });
const projection = new context.DefaultContextProjector().project([context.userMessage('a'), context.userMessage('b')], { maxItems: 1 });
// An error's name is its class's name: the bundle must not rename an error class (as it does to resolve a clash).
const errorClasses = [root, testing, adapters].flatMap((m) => Object.entries(m)).filter(([, v]) => typeof v === 'function' && (v === root.ContextLedgerError || v.prototype instanceof root.ContextLedgerError));
const inUse = new root.LogInUseError('/x');
const errors = { classes: errorClasses.length, renamed: errorClasses.filter(([k, v]) => v.name !== k).map(([k, v]) => k + ' is named ' + v.name), inUse: [inUse.name, inUse.code, root.LogInUseError.isInstance(inUse), root.ContextLedgerError.isInstance(inUse), root.ChainBrokenError.isInstance(inUse)] };
console.log(JSON.stringify({ items: foldMemory(stored).entries.length, testing: Object.keys(testing).sort(), adapters: Object.keys(adapters).sort(), split: [...new Set([...Object.keys(openAiAdapters), ...Object.keys(anthropicAdapters)])].sort(), otel: Object.keys(otel).sort(), context: Object.keys(context).sort(), sent: projection.items.length, chars: projection.report.sourceApproxChars === context.approxChars([context.userMessage('a'), context.userMessage('b')]), errors }));
`,
    );
    const out = JSON.parse(run('node', ['user.mjs'], project)) as { items: number; testing: string[]; adapters: string[]; split: string[]; otel: string[]; context: string[]; sent: number; chars: boolean; errors: { classes: number; renamed: string[]; inUse: unknown[] } };
    expect(out.items).toBe(1);
    expect(out.errors.classes).toBeGreaterThan(50);
    expect(out.errors.renamed).toEqual([]);
    expect(out.errors.inUse).toEqual(['LogInUseError', 'LOG_IN_USE', true, true, false]);
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
  // Issue 26: `npm install openai@7 context-ledger` failed with ERESOLVE. Each SDK's oldest and newest peer version
  // installs beside the package (no --force, no --legacy-peer-deps), the bridges load, and a user file that hands the
  // SDKs' objects to the adapters and bridges type-checks against that version's types.
  for (const end of ['oldest', 'newest'] as const) {
    it(`installs beside the ${end} version of every SDK peer, loads the bridges and type-checks their use`, () => {
      expect(tarball).toBeDefined();
      const project = join(work, `sdk-${end}`);
      run('mkdir', ['-p', project], work);
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: `sdk-${end}`, private: true, type: 'module' }));
      const specs = sdkSpecs(end);
      run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--engine-strict=false', join(work, tarball!), ...specs, `zod@${pkg.devDependencies['zod']}`, `@types/node@${pkg.devDependencies['@types/node']}`], project);
      const installed = Object.fromEntries(sdkPeers.map((name) => [name, (JSON.parse(readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version]));
      if (end === 'oldest') expect(Object.entries(installed).map(([name, v]) => `${name}@${v}`)).toEqual(specs);
      else {
        for (const name of sdkPeers) expect(installed[name]!.split('.')[0]).toBe(/\d+/.exec(pkg.peerDependencies[name]!.split('||').at(-1)!)![0]);
        // the versions current when issue 26 was filed, which the ranges then shut out
        const atLeast = (version: string, floor: string): boolean => {
          const [a, b] = [version, floor].map((v) => v.split('.').map(Number));
          for (let i = 0; i < 3; i++) if (a![i] !== b![i]) return a![i]! > b![i]!;
          return true;
        };
        expect({ openai: atLeast(installed['openai']!, '7.60.0'), ai: atLeast(installed['ai']!, '7.0.185'), agents: atLeast(installed['@openai/agents']!, '0.20.0') }).toEqual({ openai: true, ai: true, agents: true });
      }

      writeFileSync(
        join(project, 'user.mjs'),
        `import * as aiSdk from 'context-ledger/ai-sdk';
import * as agents from 'context-ledger/openai-agents';
import * as langchain from 'context-ledger/langchain';
import * as openai from 'context-ledger/adapters/openai';
import * as anthropic from 'context-ledger/adapters/anthropic';
console.log(JSON.stringify([aiSdk, agents, langchain, openai, anthropic].map((m) => Object.keys(m).length)));
`,
      );
      const counts = JSON.parse(run('node', ['user.mjs'], project)) as number[];
      expect(counts.every((n) => n > 0)).toBe(true);

      writeFileSync(
        join(project, 'user.ts'),
        `import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { generateText, streamText, type LanguageModel, type ModelMessage } from 'ai';
import { Agent, run } from '@openai/agents';
import { HumanMessage } from '@langchain/core/messages';
import { openMemoryLog } from 'context-ledger';
import { openAiChatCompletionsClient, openAiResponsesClient } from 'context-ledger/adapters/openai';
import { anthropicMessagesClient } from 'context-ledger/adapters/anthropic';
import { aiSdkModelClient, createAiSdkRecorder } from 'context-ledger/ai-sdk';
import { openLedgerSession } from 'context-ledger/openai-agents';
import { fromBaseMessages } from 'context-ledger/langchain';

declare const model: Exclude<LanguageModel, string>;
declare const messages: ModelMessage[];
const log = await openMemoryLog();
openAiChatCompletionsClient(new OpenAI({ apiKey: 'k' }));
openAiResponsesClient(new OpenAI({ apiKey: 'k' }));
anthropicMessagesClient(new Anthropic({ apiKey: 'k' }), { maxTokens: 1024 });
aiSdkModelClient(model);
const recorder = await createAiSdkRecorder(log);
// (ai 5's generateText has no onFinish)
await generateText({ model, messages, prepareStep: recorder.prepareStep, onStepFinish: recorder.onStepFinish });
streamText({ model, messages, prepareStep: recorder.prepareStep, onStepFinish: recorder.onStepFinish, onFinish: recorder.onFinish });
const session = await openLedgerSession(log);
await run(new Agent({ name: 'a', instructions: 'be brief' }), 'hi', { session, callModelInputFilter: session.callModelInputFilter });
fromBaseMessages([new HumanMessage('hi')]);
`,
      );
      writeFileSync(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'], skipLibCheck: true },
          include: ['user.ts'],
        }),
      );
      run(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], project);
    }, 300_000);
  }
});
