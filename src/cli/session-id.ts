// Which session a command means: the id as given, a unique prefix of one, or --last (the one written most recently).
import type { Command } from 'commander';
import type { SessionEventLog } from '../log/index.js';
import { CliError, usage } from './errors.js';
import { openForRead } from './ledger.js';

/** The most recently written session (by its last event's time, then by id), or undefined in an empty ledger. */
export const lastSession = async (log: SessionEventLog): Promise<string | undefined> => {
  let best: { id: string; at: string } | undefined;
  for await (const id of log.sessions()) {
    const head = await log.head(id);
    for await (const event of log.read(id, { fromSeq: head, toSeq: head })) {
      if (!best || event.at > best.at || (event.at === best.at && id > best.id)) best = { id, at: event.at };
    }
  }
  return best?.id;
};

/**
 * The session `given` names: itself when it exists, else the one session whose id starts with it. Several
 * matches are a usage error listing them; none leaves `given` as is (the command reports the unknown session).
 * @example await resolveSessionId(log, '3f2a') // '3f2a9c1e-…'
 */
export const resolveSessionId = async (log: SessionEventLog, given: string): Promise<string> => {
  if (given === '' || (await log.head(given)) > 0) return given;
  const matches: string[] = [];
  for await (const id of log.sessions()) if (id.startsWith(given)) matches.push(id);
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    const shown = matches.slice(0, 5).join(', ');
    throw usage(`session prefix ${JSON.stringify(given)} is ambiguous: ${matches.length} sessions start with it (${shown}${matches.length > 5 ? ', …' : ''})`);
  }
  return given;
};

const takesSession = (command: Command): boolean => command.registeredArguments[0]?.name() === 'session';

/**
 * Gives every command whose first argument is `session` a unique-prefix match and `--last`: the argument becomes
 * optional, and before the action runs it is replaced by the full id. Commands added later get it too.
 */
export const resolveSessionArguments = (program: Command): void => {
  for (const command of program.commands) {
    if (!takesSession(command)) continue;
    const argument = command.registeredArguments[0]!;
    argument.argOptional();
    argument.description = `${argument.description} (or a unique prefix of one)`;
    command.option('--last', 'the session written most recently (instead of naming one)');
  }
  program.hook('preAction', async (_program, command) => {
    if (!takesSession(command)) return;
    const options = command.opts<{ dir?: string; last?: boolean }>();
    const given = command.processedArgs[0] as string | undefined;
    if (options.last && given !== undefined) throw usage('give a session or --last, not both');
    if (!options.last && given === undefined) throw usage(`${command.name()}: missing the session (an id, a unique prefix of one, or --last)`);
    const dir = options.dir ?? './.ledger';
    const ledger = await openForRead(dir, () => undefined);
    try {
      if (options.last) {
        const last = await lastSession(ledger.log);
        if (last === undefined) throw new CliError(`no sessions in ${dir}`, 2);
        command.processedArgs[0] = last;
      } else {
        command.processedArgs[0] = await resolveSessionId(ledger.log, given!);
      }
    } finally {
      await ledger.close();
    }
  });
};
