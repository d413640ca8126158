// extractFileOperations and toolNameWords: which files tool calls read or changed, matched by words, not substrings.
import { describe, expect, it } from 'vitest';
import { extractFileOperations, toolNameWords } from '../../src/compact/index.js';
import { assistantMessage, functionCall, type MemoryItem } from '../../src/items/index.js';

const call = (name: string, args: string | object = { path: 'x.ts' }): MemoryItem => functionCall(`id-${name}`, name, args);
const reads = (...items: MemoryItem[]): string[] => extractFileOperations(items, true);
const changes = (...items: MemoryItem[]): string[] => extractFileOperations(items, false);

describe('toolNameWords', () => {
  it('splits on _, -, ., spaces and camelCase, lower-cased', () => {
    expect(toolNameWords('read_file')).toEqual(['read', 'file']);
    expect(toolNameWords('readFile')).toEqual(['read', 'file']);
    expect(toolNameWords('str-replace.editor tool')).toEqual(['str', 'replace', 'editor', 'tool']);
    expect(toolNameWords('HTTPGetFile')).toEqual(['http', 'get', 'file']);
    expect(toolNameWords('fs.writeJSON')).toEqual(['fs', 'write', 'json']);
    expect(toolNameWords('__rm__')).toEqual(['rm']);
    expect(toolNameWords('')).toEqual([]);
  });
});

describe('extractFileOperations', () => {
  it('counts read_file, readFile, cat, grep, find, ls, head, tail, less and view as reads', () => {
    for (const name of ['read_file', 'readFile', 'cat', 'grep', 'find_files', 'ls', 'head', 'tail', 'less', 'view_file', 'file.view']) {
      expect(reads(call(name)), name).toEqual(['x.ts']);
      expect(changes(call(name)), name).toEqual([]);
    }
  });

  it('counts write_file, editFile, create, delete, mkdir, mv, rm, patch, save and append as changes', () => {
    for (const name of ['write_file', 'editFile', 'create', 'delete_file', 'mkdir', 'mv', 'rm', 'apply_patch', 'patch', 'saveFile', 'append_to_file']) {
      expect(changes(call(name)), name).toEqual(['x.ts']);
      expect(reads(call(name)), name).toEqual([]);
    }
  });

  it('matches words, not substrings: format is not rm, tools is not ls, str-replace is not a match', () => {
    for (const name of ['format', 'formatter', 'tools', 'list_tools', 'str-replace', 'str_replace_editor', 'spreadsheet', 'catalog', 'bash', 'threaded', 'reader']) {
      expect(reads(call(name)), name).toEqual([]);
      expect(changes(call(name)), name).toEqual([]);
    }
  });

  it('finds the path under path, file, filename, filepath or file_path', () => {
    for (const key of ['path', 'file', 'filename', 'filepath', 'file_path']) {
      expect(reads(call('read_file', { [key]: `${key}.ts` })), key).toEqual([`${key}.ts`]);
    }
    expect(reads(call('read_file', { filePath: 'camel.ts', target: 't.ts', dir: 'd' }))).toEqual([]);
    expect(reads(call('read_file', { path: '' }))).toEqual([]);
    expect(reads(call('read_file', { path: 42 }))).toEqual([]);
    expect(reads(call('read_file', { path: ['a.ts', 'b.ts', 3] }))).toEqual(['a.ts', 'b.ts']);
  });

  it('reads arguments given as a JSON string or as an object, and ignores unparseable ones', () => {
    expect(reads(call('read_file', '{"path":"json-string.ts"}'))).toEqual(['json-string.ts']);
    const objectArgs = { type: 'function_call', call_id: 'o', name: 'read_file', arguments: { path: 'object.ts' } } as unknown as MemoryItem;
    expect(reads(objectArgs)).toEqual(['object.ts']);
    expect(reads(call('read_file', 'not json'))).toEqual([]);
    expect(reads(call('read_file', '["a.ts"]'))).toEqual([]);
    expect(reads(call('read_file', 'null'))).toEqual([]);
  });

  it('finds calls as function_call items, flat and nested tool_calls, and tool_use parts', () => {
    const items: MemoryItem[] = [
      functionCall('c1', 'read_file', { path: 'responses.ts' }),
      assistantMessage('', [
        { id: 't1', type: 'function', name: 'readFile', arguments: '{"path":"flat.ts"}' },
        { id: 't2', type: 'function', function: { name: 'cat', arguments: '{"file":"nested.ts"}' } },
        { id: 't3', type: 'function', function: { name: 'write_file', arguments: '{"path":"written.ts"}' } },
      ]),
      {
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'looking' },
          { type: 'tool_use', id: 'u1', name: 'view', input: { path: 'tool-use.ts' } },
          { type: 'tool_use', id: 'u2', name: 'str_replace_based_edit_tool', input: { path: 'edited.ts' } },
        ],
      } as MemoryItem,
    ];
    expect(reads(...items)).toEqual(['responses.ts', 'flat.ts', 'nested.ts', 'tool-use.ts']);
    expect(changes(...items)).toEqual(['written.ts', 'edited.ts']);
  });

  it('de-duplicates, keeping first-seen order', () => {
    const items = [call('read_file', { path: 'b.ts' }), call('cat', { path: 'a.ts' }), call('grep', { path: 'b.ts' }), call('head', { file: 'c.ts' }), call('tail', { path: 'a.ts' })];
    expect(reads(...items)).toEqual(['b.ts', 'a.ts', 'c.ts']);
  });

  it('ignores items that are not calls, and calls without a name', () => {
    const items: MemoryItem[] = [
      { type: 'function_call_output', call_id: 'x', output: '{"path":"out.ts"}' },
      { type: 'message', role: 'user', content: 'read_file a.ts' },
      assistantMessage('', [{ id: 'n', type: 'function', arguments: '{"path":"nameless.ts"}' }]),
      { type: 'web_search_call', name: 'read', path: 'other.ts' } as MemoryItem,
    ];
    expect(reads(...items)).toEqual([]);
    expect(extractFileOperations([], true)).toEqual([]);
  });
});
