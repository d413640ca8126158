// Installs the peer libraries of the projection bench on first use and loads their adapters.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** A Chat Completions message, the common shape the bench converts from and back to. */
export type ChatMessage = {
  readonly role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  readonly content: string | null;
  readonly tool_calls?: readonly ChatToolCall[];
  readonly tool_call_id?: string;
  readonly reasoning_content?: string;
};

/** A tool call on an assistant message, OpenAI nested shape. */
export type ChatToolCall = {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
};

/** One peer library prepared for a run: convert once (untimed), then trim as often as needed (timed). */
export interface PeerTrimmer<Native> {
  readonly name: string;
  readonly version: string;
  /** What the trimmer is configured with, printed under the table. */
  readonly setup: string;
  /** Converts Chat Completions messages to the library's own message type (not timed). */
  toNative(messages: readonly ChatMessage[]): Native[];
  /** The timed operation: trims a history to the budget. */
  trim(history: readonly Native[], maxTokens: number): Promise<Native[]>;
  /** Converts the library's output back to Chat Completions messages to check it (not timed); skips null entries. */
  toChat(messages: readonly Native[]): ChatMessage[];
}

export interface PeerLibraries {
  /** `@langchain/core` trimMessages, strategy last, startOn human, includeSystem, the given token counter. */
  readonly langchain: PeerTrimmer<unknown>;
  /** `ai` pruneMessages followed by a newest-first token cut with the given counter. */
  readonly aiSdk: PeerTrimmer<unknown>;
  /** `@mastra/memory` TokenLimiter (its own js-tiktoken o200k counts), system message passed apart. */
  readonly mastra: PeerTrimmer<unknown>;
}

export interface PeerOptions {
  /**
   * Tokens of one Chat Completions message, counted as the projector counts the items it converts to. Given to
   * LangChain's tokenCounter and to the cut after pruneMessages, so every library that accepts a counter gets ours.
   */
  readonly countChat: (message: ChatMessage) => number;
}

const peersDir = dirname(fileURLToPath(import.meta.url));

const pinnedDependencies = (): Record<string, string> => {
  const manifest = JSON.parse(readFileSync(join(peersDir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  return manifest.dependencies ?? {};
};

/** Names of pinned peers that are missing from bench/peers/node_modules or installed at another version. */
export const stalePeers = (): string[] => {
  const stale: string[] = [];
  for (const [name, version] of Object.entries(pinnedDependencies())) {
    const manifestPath = join(peersDir, 'node_modules', name, 'package.json');
    if (!existsSync(manifestPath)) {
      stale.push(name);
      continue;
    }
    const installed = (JSON.parse(readFileSync(manifestPath, 'utf8')) as { version?: string }).version;
    if (installed !== version) stale.push(`${name} (${installed ?? '?'} installed, ${version} pinned)`);
  }
  return stale;
};

/** Installs bench/peers with `npm ci` (from its lockfile) when a pinned peer is missing; prints progress. */
export const ensurePeers = (): void => {
  const stale = stalePeers();
  if (stale.length === 0) return;
  const hasLock = existsSync(join(peersDir, 'package-lock.json'));
  const command = hasLock ? 'ci' : 'install';
  console.log(`peers: installing bench/peers (npm ${command}; about 370 MB, a minute or two) because of: ${stale.join(', ')}`);
  const started = performance.now();
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, [command, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: peersDir,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (result.error) throw new Error(`peers: could not run npm: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`peers: npm ${command} in ${peersDir} failed with exit ${result.status}`);
  const still = stalePeers();
  if (still.length > 0) throw new Error(`peers: still missing after npm ${command}: ${still.join(', ')}`);
  console.log(`peers: installed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
};

/**
 * Installs the peers if needed and loads their adapters. The adapters module is imported by a computed URL so
 * that type-checking the root project never needs the peers installed.
 */
export const loadPeers = async (options: PeerOptions): Promise<PeerLibraries> => {
  ensurePeers();
  const url = pathToFileURL(join(peersDir, 'adapters.ts')).href;
  const adapters = (await import(url)) as { createPeers: (options: PeerOptions) => Promise<PeerLibraries> };
  return adapters.createPeers(options);
};
