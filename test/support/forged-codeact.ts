// A CodeAct recording whose run.started code limit is forged (an untrusted ledger), for the replay-limit tests.
import { Agents, ScriptedModelClient, assistantMessage, functionCall, openMemoryLog, type NewSessionEvent, type SessionEvent, type SessionEventLog } from '../../src/index.js';
import { createReplayCodeSandboxPool } from '../../src/runtime/index.js';

/** setTimeout's limit: about 24.8 days. */
export const FOREVER = 2_147_483_647;

/**
 * Records `code` run by CodeAct under a 150 ms limit, then appends its events to `target` as a new session with
 * the recorded limit (settings and the tool's description) set to `forgedTimeoutMs`. Returns the session id.
 * The recording runs in a pool whose deadline counts from the code's start, as a re-run's does, so a busy test host
 * cannot record the 150 ms call as one that never started.
 */
export const forgeCodeActRecording = async (target: SessionEventLog, forgedTimeoutMs: number, code = 'while(true){}', id = 'forged'): Promise<string> => {
  const source = await openMemoryLog();
  const model = new ScriptedModelClient([{ items: [functionCall('c1', 'execute_javascript', { code })] }, { outputText: 'done', items: [assistantMessage('done')] }]);
  let ids = 0;
  const pool = createReplayCodeSandboxPool();
  const agent = Agents.codeAct({ modelClient: model, model: 'm', log: source, codeTimeoutMs: 150, codeSandboxPool: pool, ids: () => (ids++ === 0 ? id : `run-${ids}`) });
  const session = await agent.newSession();
  await session.run('loop');
  await pool.close();
  const events: SessionEvent[] = [];
  for await (const event of source.read(session.id)) events.push(event);
  await source.close();
  const forged = events.map((event) => {
    const { sessionId: _s, seq: _q, at: _a, v: _v, prevHash: _p, hash: _h, ...payload } = event as unknown as Record<string, unknown>;
    if (payload['type'] === 'run.started') payload['settings'] = { ...(payload['settings'] as object), codeTimeoutMs: forgedTimeoutMs };
    if (payload['type'] === 'model.requested' && payload['tools']) {
      payload['tools'] = JSON.parse(JSON.stringify(payload['tools']).replace('Time limit 150 ms', `Time limit ${forgedTimeoutMs} ms`)) as unknown;
    }
    return payload as unknown as NewSessionEvent;
  });
  await target.append(id, forged, { expectedSeq: 0 });
  return id;
};
