// The layer chain of DESIGN.md (folder = concept), checked by `npm run lint:layers` (part of `npm run lint`):
// base <- items <- model <- events <- memory <- context <- providers <- compact <- adapters <- session <- runtime <- replay <- cli.
// base holds the errors and the small helpers every layer stands on; log depends on events only (postgres, the log on
// PostgreSQL, on log); context needs nothing of memory and memory never imports log; providers are the pure item
// converters (no I/O), adapters the SDK clients built on them (the context-ledger/adapters entry);
// bridges sit above replay and nothing inside the library imports them; otel (context-ledger/otel) sits above replay
// and only the CLI imports it; no cycles anywhere.
const chain = (...names) => names;
const below = {
  base: [],
  items: chain('base'),
  model: chain('items', 'base'),
  events: chain('items', 'model', 'base'),
  log: chain('events', 'items', 'base'),
  postgres: chain('log', 'events', 'items', 'base'),
  memory: chain('events', 'items', 'model', 'base'),
  context: chain('events', 'items', 'model', 'base'),
  providers: chain('context', 'events', 'items', 'model', 'base'),
  compact: chain('context', 'memory', 'events', 'items', 'model', 'base'),
  adapters: chain('providers', 'compact', 'context', 'events', 'items', 'model', 'base'),
  session: chain('compact', 'context', 'memory', 'log', 'events', 'items', 'model', 'base'),
  runtime: chain('adapters', 'providers', 'session', 'compact', 'context', 'memory', 'log', 'events', 'items', 'model', 'base'),
};
const upTo = (name) => [name, ...below[name]];
below.replay = upTo('runtime');
below.testing = ['replay', ...below.replay];
below.bridges = ['replay', ...below.replay];
below.otel = ['replay', ...below.replay];
below.cli = ['otel', 'postgres', 'replay', ...below.replay];
const layers = Object.keys(below);
const folder = (name) => `^src/${name}/`;

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
