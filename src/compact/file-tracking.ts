// File tracking: which files the tool calls in some items read or changed.
import { isFunctionCall, isMessage, toolCallArguments, toolCallName, type MemoryItem } from '../items/index.js';

const READ_WORDS = new Set(['read', 'cat', 'grep', 'find', 'ls', 'head', 'tail', 'less', 'view']);
const CHANGE_WORDS = new Set(['write', 'edit', 'create', 'delete', 'mkdir', 'mv', 'rm', 'patch', 'save', 'append']);
const PATH_KEYS = ['path', 'file', 'filename', 'filepath', 'file_path'] as const;

/** The words of a tool name: split on `_`, `-`, `.`, spaces and camelCase, lower-cased. */
export const toolNameWords = (name: string): string[] =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[_\-.\s]+/)
    .map((w) => w.toLowerCase())
    .filter((w) => w.length > 0);

const argsObject = (args: unknown): Record<string, unknown> | undefined => {
  if (typeof args === 'string') {
    try {
      const parsed: unknown = JSON.parse(args);
      return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }
  return args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
};

const pathsOf = (args: unknown): string[] => {
  const obj = argsObject(args);
  if (!obj) return [];
  const out: string[] = [];
  for (const key of PATH_KEYS) {
    const value = obj[key];
    if (typeof value === 'string' && value.length > 0) out.push(value);
    else if (Array.isArray(value)) for (const v of value) if (typeof v === 'string' && v.length > 0) out.push(v);
  }
  return out;
};

/** Every tool call in the items as `{ name, args }`: function_call items, tool_calls (flat or nested), tool_use parts. */
const callsOf = (items: readonly MemoryItem[]): { name: string; args: unknown }[] => {
  const calls: { name: string; args: unknown }[] = [];
  for (const item of items) {
    if (isFunctionCall(item)) {
      calls.push({ name: item.name, args: item.arguments });
    } else if (isMessage(item)) {
      for (const call of Array.isArray(item.tool_calls) ? item.tool_calls : []) {
        const name = toolCallName(call);
        if (name) calls.push({ name, args: toolCallArguments(call) });
      }
      if (Array.isArray(item.content)) {
        for (const part of item.content) {
          if (part && part.type === 'tool_use' && typeof part['name'] === 'string') calls.push({ name: part['name'], args: part['input'] });
        }
      }
    }
  }
  return calls;
};

/**
 * Files the items' tool calls read (`reads` true) or changed (`reads` false), de-duplicated in order.
 * A tool matches by the words of its name, so `read_file` reads and `format` removes nothing.
 * @example extractFileOperations([functionCall('c1', 'read_file', { path: 'a.ts' })], true) // ['a.ts']
 */
export const extractFileOperations = (items: readonly MemoryItem[], reads: boolean): string[] => {
  const verbs = reads ? READ_WORDS : CHANGE_WORDS;
  const seen = new Set<string>();
  for (const { name, args } of callsOf(items)) {
    if (!toolNameWords(name).some((w) => verbs.has(w))) continue;
    for (const path of pathsOf(args)) seen.add(path);
  }
  return [...seen];
};
