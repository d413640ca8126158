// Recorded facts (failed commands, test results, approvals, artifacts, sandbox state) as result lists.
import { type RecordedFact } from '../events/index.js';
import { oneLine } from '../base/index.js';

export interface FactLists {
  readonly failedCommands: string[];
  readonly testResults: string[];
  readonly userConfirmations: string[];
  readonly changedArtifacts: string[];
  readonly sandboxState: string[];
}

/** A fact's text as one line of at most 200 characters. */
const clip = (text: string): string => oneLine(text, 200);

/** One line per fact, in the order they were recorded; deterministic. */
export const factLists = (facts: readonly RecordedFact[] = []): FactLists => {
  const lists: FactLists = { failedCommands: [], testResults: [], userConfirmations: [], changedArtifacts: [], sandboxState: [] };
  for (const fact of facts) {
    switch (fact.type) {
      case 'command.failed': {
        const exit = fact.exitCode !== undefined ? ` (exit ${fact.exitCode})` : '';
        const detail = fact.error ?? fact.output;
        lists.failedCommands.push(`${clip(fact.command)}${exit}${detail ? `: ${clip(detail)}` : ''}`);
        break;
      }
      case 'test.result': {
        const counts = [
          fact.passed !== undefined ? `${fact.passed} passed` : undefined,
          fact.failed !== undefined ? `${fact.failed} failed` : undefined,
          fact.skipped !== undefined ? `${fact.skipped} skipped` : undefined,
        ].filter((x): x is string => x !== undefined);
        const what = fact.suite ?? fact.command ?? 'tests';
        lists.testResults.push(
          `${fact.status}: ${clip(what)}${counts.length ? ` (${counts.join(', ')})` : ''}${fact.summary ? ` — ${clip(fact.summary)}` : ''}`,
        );
        break;
      }
      case 'approval.recorded':
        lists.userConfirmations.push(
          `${fact.approved ? 'approved' : 'rejected'}: ${clip(fact.action)}${fact.by ? ` by ${fact.by}` : ''}${fact.reason ? ` (${clip(fact.reason)})` : ''}`,
        );
        break;
      case 'artifact.changed':
        lists.changedArtifacts.push(
          `${fact.change} ${fact.path}${fact.previousPath ? ` (from ${fact.previousPath})` : ''}${fact.summary ? `: ${clip(fact.summary)}` : ''}`,
        );
        break;
      case 'sandbox.state':
        lists.sandboxState.push(clip(fact.description));
        break;
    }
  }
  return lists;
};
