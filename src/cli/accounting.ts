// The CLI's side of cost and cache accounting: `--prices FILE|JSON`, and the lines `audit` and `context --step` print.
import { readFile } from 'node:fs/promises';
import { InvalidOptionsError } from '../base/errors.js';
import { parsePriceTable, type AccountTotals, type PriceTable, type StepAccount } from '../replay/index.js';
import { usage } from './errors.js';
import { num, type Output } from './output.js';

/** `--prices`: a JSON object given inline (it starts with `{`) or the path of a JSON file; a bad table is exit 2. */
export const pricesOption = async (value: string | undefined): Promise<PriceTable | undefined> => {
  if (value === undefined) return undefined;
  let text = value;
  if (!value.trimStart().startsWith('{')) {
    try {
      text = await readFile(value, 'utf8');
    } catch (error) {
      throw usage(`--prices: cannot read ${JSON.stringify(value)} (${(error as NodeJS.ErrnoException).code ?? String(error)}); give a JSON file or a JSON object`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw usage(`--prices: not JSON: ${(error as Error).message}`);
  }
  try {
    return parsePriceTable(parsed);
  } catch (error) {
    if (InvalidOptionsError.isInstance(error)) throw usage(`--prices: ${error.issues.map((i) => (i.path === '' ? i.message : `${i.path}: ${i.message}`)).join('; ')}`);
    throw error;
  }
};

const money = (cost: number): string => `$${cost < 0.01 && cost > 0 ? cost.toFixed(6) : cost.toFixed(4)}`;
const percent = (share: number): string => `${(share * 100).toFixed(1)}%`;

/** One step's call, on one line: usage, cost, cacheable prefix and measured cache; `priced`: prices were given (a model without one is said). */
export const accountLine = (account: StepAccount | undefined, priced = false): string => {
  if (!account) return 'model call: none recorded';
  const parts: string[] = [];
  const u = account.usage;
  if (u) {
    const cache = [u.cachedInputTokens > 0 || u.cacheReported ? `${num(u.cachedInputTokens)} cached` : '', u.cacheWriteTokens > 0 ? `${num(u.cacheWriteTokens)} written to cache` : '']
      .filter(Boolean)
      .join(', ');
    parts.push(`${num(u.inputTokens)} input${cache ? ` (${cache})` : ''}, ${num(u.outputTokens)} output tokens`);
  } else parts.push('no usage recorded');
  if (account.cost !== undefined) parts.push(`cost ${money(account.cost)}`);
  const prefix = account.cacheablePrefix;
  if (prefix) parts.push(`cacheable prefix ${num(prefix.tokens)} of ${num(prefix.requestTokens)} tokens (${percent(prefix.share)})`);
  if (account.measuredCacheShare !== undefined) parts.push(`provider cache hit ${percent(account.measuredCacheShare)}`);
  if (account.estimate?.cost !== undefined) parts.push(`estimated ${money(account.estimate.cost)} if exactly the prefix were cached`);
  else if (priced && account.cost === undefined) parts.push(`no price for ${account.model ?? 'the model'}: no cost`);
  return `model call${account.model ? ` ${account.model}` : ''}: ${parts.join('; ')}`;
};

/** The session's accounting, as the audit summary prints it. */
export const printAccountTotals = (t: AccountTotals, out: Output): void => {
  const sum = (label: string, u: AccountTotals['steps']): string =>
    `${label} ${num(u.calls)} calls, ${num(u.inputTokens)} input (${num(u.cachedInputTokens)} cached, ${num(u.cacheWriteTokens)} written), ${num(u.outputTokens)} output${u.cost !== undefined ? `, ${money(u.cost)}` : ''}`;
  out.line(`usage:      ${sum('steps', t.steps)}; ${sum('compactions', t.compactions)}`);
  if (t.cost !== undefined) out.line(`cost:       ${money(t.cost)} in all${t.unpricedModels.length > 0 ? ` (no price for ${t.unpricedModels.join(', ')})` : ''}`);
  out.line(
    `cache:      cacheable prefix ${num(t.cacheablePrefix.tokens)} of ${num(t.cacheablePrefix.requestTokens)} request tokens (${percent(t.cacheablePrefix.share)})` +
      (t.estimate.cost !== undefined
        ? `; estimated ${money(t.estimate.cost)} if a provider cached exactly the prefix${t.unpricedModels.length > 0 ? ` (leaves out the calls of ${t.unpricedModels.join(', ')}: no price)` : ''}`
        : '') +
      (t.measuredCache ? `; provider reported ${num(t.measuredCache.cachedInputTokens)} of ${num(t.measuredCache.inputTokens)} input tokens cached (${percent(t.measuredCache.share)})` : '; the provider reported no cache figures'),
  );
};
