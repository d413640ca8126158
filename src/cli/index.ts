#!/usr/bin/env node
// context-ledger CLI: look into a LevelDB log (sessions, events, verify). Replay and audit come later.
import { parseArgs } from 'node:util';
import { openLevelLog } from '../log/index.js';

const usage = `usage: context-ledger <command> [--dir ./.ledger]
  sessions                 list the sessions in the log
  events <sessionId>       print a session's events as JSON lines (--from N --to N)
  verify <sessionId>       check a session's hash chain (exit 1 when broken)`;

const main = async (): Promise<number> => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { dir: { type: 'string', default: './.ledger' }, from: { type: 'string' }, to: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [command, sessionId] = positionals;
  if (values.help || !command) {
    console.log(usage);
    return command || values.help ? 0 : 2;
  }
  if ((command === 'events' || command === 'verify') && !sessionId) {
    console.error(`${command}: a session id is required\n${usage}`);
    return 2;
  }
  const log = await openLevelLog(values.dir);
  try {
    switch (command) {
      case 'sessions':
        for await (const id of log.sessions()) console.log(`${id}\t${await log.head(id)} events`);
        return 0;
      case 'events': {
        const range = {
          ...(values.from !== undefined ? { fromSeq: Number(values.from) } : {}),
          ...(values.to !== undefined ? { toSeq: Number(values.to) } : {}),
        };
        for await (const event of log.read(sessionId!, range)) console.log(JSON.stringify(event));
        return 0;
      }
      case 'verify': {
        const result = await log.verify(sessionId!);
        console.log(JSON.stringify(result));
        return result.valid ? 0 : 1;
      }
      default:
        console.error(`unknown command ${JSON.stringify(command)}\n${usage}`);
        return 2;
    }
  } finally {
    await log.close();
  }
};

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  },
);
