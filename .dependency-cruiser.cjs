// The layer chain of DESIGN.md, checked by `npm run lint:layers` (part of `npm run lint`):
// items <- model <- events <- memory <- context <- compact <- session <- runtime <- replay <- cli,
// log depends on events only (postgres, the log on PostgreSQL, on log), context needs nothing of memory, memory never imports log,
// bridges sit above replay and nothing inside the library imports them; otel (context-ledger/otel) sits above replay
// and only the CLI imports it; no cycles anywhere.
const below = {
  errors: [],
  items: ['errors'],
  model: ['items', 'errors'],
  events: ['items', 'model', 'errors'],
  log: ['events', 'items', 'errors'],
  postgres: ['log', 'events', 'items', 'errors'],
  memory: ['events', 'items', 'model', 'errors'],
  context: ['events', 'items', 'model', 'errors'],
  compact: ['context', 'memory', 'events', 'items', 'model', 'errors'],
  session: ['compact', 'context', 'memory', 'log', 'events', 'items', 'model', 'errors'],
  runtime: ['session', 'compact', 'context', 'memory', 'log', 'events', 'items', 'model', 'errors'],
  replay: ['runtime', 'session', 'compact', 'context', 'memory', 'log', 'events', 'items', 'model', 'errors'],
  testing: ['replay', 'runtime', 'session', 'compact', 'context', 'memory', 'log', 'events', 'items', 'model', 'errors'],
  bridges: ['replay', 'runtime', 'session', 'compact', 'context', 'memory', 'log', 'events', 'items', 'model', 'errors'],
  otel: ['replay', 'runtime', 'session', 'compact', 'context', 'memory', 'log', 'events', 'items', 'model', 'errors'],
  cli: ['otel', 'postgres', 'replay', 'runtime', 'session', 'compact', 'context', 'memory', 'log', 'events', 'items', 'model', 'errors'],
};
const layers = Object.keys(below);
const folder = (name) => (name === 'errors' ? '^src/errors(\\.ts|/)' : `^src/${name}/`);

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'An import cycle makes load order and layering undefined.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...layers.map((layer) => ({
      name: `layer-${layer}`,
      severity: 'error',
      comment: `src/${layer} may import only: ${below[layer].join(', ') || 'nothing of the library'} (DESIGN.md layout).`,
      from: { path: folder(layer) },
      to: {
        path: `^src/(${layers.filter((l) => l !== layer && !below[layer].includes(l)).join('|')})(\\.ts|/)`,
      },
    })),
    {
      name: 'bridges-are-leaves',
      severity: 'error',
      comment: 'Bridges are entries of their own; nothing inside the library imports them.',
      from: { path: '^src/', pathNot: '^src/bridges/' },
      to: { path: '^src/bridges/' },
    },
    {
      name: 'otel-is-an-entry',
      severity: 'error',
      comment: 'context-ledger/otel is an entry of its own: only the CLI imports it, so the root entry never loads OpenTelemetry.',
      from: { path: '^src/', pathNot: '^src/(otel|cli)/' },
      to: { path: '^src/otel/' },
    },
    {
      name: 'root-entry-not-cli',
      severity: 'error',
      comment: 'The root entry must not load the CLI.',
      from: { path: '^src/index\\.ts$' },
      to: { path: '^src/cli/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
