// Working memory: named blocks the agent edits with the working_memory tool; each edit is one `memory.noted`.
import { z } from 'zod';
import type { NewSessionEventOf } from '../../events/index.js';
import type { MemoryState } from '../../memory/index.js';
import { defineTool, type Tool } from '../tools.js';
import { ToolFailedError } from '../errors.js';
import { memoryAccessOf } from './access.js';

/** One block the agent may keep notes in. */
export interface WorkingMemoryBlockOptions {
  readonly name: string;
  readonly description?: string;
  /** The longest text the block may hold; an edit past it is refused. */
  readonly maxChars: number;
  /** The text a new block starts with (default empty). */
  readonly initial?: string;
}

/** The agent option `workingMemory`. */
export interface WorkingMemoryOptions {
  readonly blocks: readonly WorkingMemoryBlockOptions[];
}

export const WORKING_MEMORY_TOOL = 'working_memory';

/** The schema of the `workingMemory` agent option: unique non-empty names, positive limits, an initial text within its limit. */
export const WorkingMemoryOptionsSchema = z.strictObject({
  blocks: z
    .array(
      z
        .strictObject({
          name: z.string().min(1),
          description: z.string().optional(),
          maxChars: z.number().int().positive(),
          initial: z.string().optional(),
        })
        .refine((b) => (b.initial ?? '').length <= b.maxChars, { message: 'initial is longer than maxChars', path: ['initial'] }),
    )
    .min(1)
    .refine((blocks) => new Set(blocks.map((b) => b.name)).size === blocks.length, { message: 'block names must be unique' }),
});

/** The `memory.noted` events that declare the blocks memory does not hold yet (a new session, or blocks added since). */
export const seedingEvents = (options: WorkingMemoryOptions, state: MemoryState): NewSessionEventOf<'memory.noted'>[] =>
  options.blocks
    .filter((b) => !state.blocks.some((held) => held.name === b.name))
    .map((b) => ({
      type: 'memory.noted',
      block: b.name,
      text: b.initial ?? '',
      ...(b.description !== undefined ? { description: b.description } : {}),
      maxChars: b.maxChars,
    }));

const parameters = z.object({
  operation: z.enum(['set', 'append', 'replace']).describe('set: replace the whole block with text; append: add text at its end; replace: change old text to new text.'),
  block: z.string().min(1).describe('The block to edit.'),
  text: z.string().optional().describe('set and append: the text.'),
  old: z.string().optional().describe('replace: the exact text to find in the block (its first occurrence is replaced).'),
  new: z.string().optional().describe('replace: the text to put in its place.'),
});

/**
 * The `working_memory` tool over the declared blocks (the agent adds it when given `workingMemory`). Each edit
 * appends `memory.noted` with the block's full new text; an edit past `maxChars`, an unknown block or a `replace`
 * whose old text is not in the block is refused with an error result and nothing is written.
 * @example Agents.react({ ..., workingMemory: { blocks: [{ name: 'plan', maxChars: 2000 }] } })
 */
export const workingMemoryTool = (options: WorkingMemoryOptions): Tool<typeof parameters> => {
  const declared = new Map(options.blocks.map((b) => [b.name, b]));
  const names = options.blocks.map((b) => b.name).join(', ');
  return defineTool({
    name: WORKING_MEMORY_TOOL,
    description:
      `Edit your working memory: notes that stay in every prompt, whatever is dropped or compacted. Blocks: ` +
      options.blocks.map((b) => `${b.name} (up to ${b.maxChars} chars${b.description ? `; ${b.description}` : ''})`).join(', ') +
      '. Operations: set (the whole text), append (add at the end), replace (old text → new text).',
    parameters,
    async execute(args, context) {
      const access = memoryAccessOf(context, WORKING_MEMORY_TOOL);
      const block = declared.get(args.block);
      if (!block) throw new ToolFailedError(WORKING_MEMORY_TOOL, `no block ${JSON.stringify(args.block)}; the blocks are: ${names}`);
      const current = access.session.memory.state().blocks.find((b) => b.name === block.name)?.text ?? block.initial ?? '';
      let next: string;
      if (args.operation === 'replace') {
        if (args.old === undefined || args.new === undefined) throw new ToolFailedError(WORKING_MEMORY_TOOL, 'replace needs "old" (the text to find) and "new" (its replacement)');
        if (args.old === '') throw new ToolFailedError(WORKING_MEMORY_TOOL, 'replace needs a non-empty "old" text');
        const at = current.indexOf(args.old);
        if (at < 0) throw new ToolFailedError(WORKING_MEMORY_TOOL, `block ${block.name} does not contain the old text ${JSON.stringify(args.old.length > 80 ? `${args.old.slice(0, 80)}…` : args.old)}; nothing was changed`);
        next = current.slice(0, at) + args.new + current.slice(at + args.old.length);
      } else {
        if (args.text === undefined) throw new ToolFailedError(WORKING_MEMORY_TOOL, `${args.operation} needs "text"`);
        next = args.operation === 'set' ? args.text : current + args.text;
      }
      if (next.length > block.maxChars) {
        throw new ToolFailedError(WORKING_MEMORY_TOOL, `block ${block.name} would hold ${next.length} characters, over its limit of ${block.maxChars}; nothing was changed (shorten it, or set a shorter text)`);
      }
      await access.record([
        {
          type: 'memory.noted',
          block: block.name,
          text: next,
          ...(block.description !== undefined ? { description: block.description } : {}),
          maxChars: block.maxChars,
          step: context.step,
          callId: context.callId,
        },
      ]);
      return `${block.name} now holds ${next.length}/${block.maxChars} characters.`;
    },
  });
};
