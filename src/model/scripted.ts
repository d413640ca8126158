// ScriptedModelClient: answers from a list and records the requests it got (tests and examples).
import { ScriptExhaustedError } from './errors.js';
import type { ModelClient, ModelRequest, ModelResult } from './types.js';

export type ScriptedAnswer = ModelResult | Error | ((request: ModelRequest) => ModelResult | Promise<ModelResult>);

/**
 * A model that plays back answers in order. An `Error` entry is thrown; a function computes the answer.
 * @example const model = new ScriptedModelClient([{ outputText: 'done', items: [assistantMessage('done')] }])
 */
export class ScriptedModelClient implements ModelClient {
  readonly requests: ModelRequest[] = [];
  #next = 0;

  constructor(private readonly answers: readonly ScriptedAnswer[]) {}

  /** How many answers are left. */
  get remaining(): number {
    return this.answers.length - this.#next;
  }

  async create(request: ModelRequest, options?: { readonly signal?: AbortSignal }): Promise<ModelResult> {
    options?.signal?.throwIfAborted();
    this.requests.push(request);
    const answer = this.answers[this.#next];
    if (answer === undefined) throw new ScriptExhaustedError(this.requests.length);
    this.#next += 1;
    if (answer instanceof Error) throw answer;
    return typeof answer === 'function' ? answer(request) : answer;
  }
}
