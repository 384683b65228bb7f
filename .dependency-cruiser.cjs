/**
 * The layers of src/ and the one direction of imports between them (see each folder's README.md):
 * cli -> api -> sync -> download | upload | coverage -> data-root -> service -> http -> naming -> core, and the
 * reference server on naming and core only. Every file of src/ belongs to a layer named here (or to the server): a
 * new folder gets its place in this list before anything imports it. `npm test` runs this through `npm run deps`; a
 * violation names both files.
 */
const LAYERS = [
  ['core', '^src/core/'],
  ['naming', '^src/naming/'],
  ['http', '^src/http/'],
  ['service', '^src/service/'],
  ['data-root', '^src/data-root/'],
  ['engines', '^src/(download|upload|coverage)/'],
  ['compositions', '^src/sync/'],
  ['library', '^src/api(-types|-open)?\\.ts$'],
  ['cli', '^src/cli/'],
  ['index', '^src/index\\.ts$'],
];

/** Every place of src/ a rule names: the layers, and the reference server beside them. */
const PLACED = `${LAYERS.map(([, path]) => `(${path})`).join('|')}|(^src/server/)`;

const upward = LAYERS.slice(0, -1).map(([name, path], at) => ({
  name: `${name}-imports-upward`,
  comment: `${name} may import only the layers below it: ${
    LAYERS.slice(0, at)
      .map(([below]) => below)
      .join(', ') || 'nothing of src/'
  }.`,
  severity: 'error',
  from: { path },
  to: {
    path: LAYERS.slice(at + 1)
      .map(([, above]) => above)
      .join('|'),
  },
}));

/**
 * The rooms of download/, lowest first: a room imports only the rooms below it (and download/types.ts), never
 * download/engine.ts, which stands on them all.
 */
const DOWNLOAD_ROOMS = ['part', 'ranged', 'object', 'batch'];

const downloadRooms = DOWNLOAD_ROOMS.map((room, at) => ({
  name: `download-${room}-imports-upward`,
  comment: `download/${room}/ may import only the rooms below it: ${
    DOWNLOAD_ROOMS.slice(0, at).join(', ') || 'no other room'
  } (and download/types.ts).`,
  severity: 'error',
  from: { path: `^src/download/${room}/` },
  to: {
    path: [
      ...DOWNLOAD_ROOMS.slice(at + 1).map((above) => `^src/download/${above}/`),
      '^src/download/engine\\.ts$',
    ].join('|'),
  },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Import circles hide which module owns what; move the shared part below both.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'outside-the-layers',
      comment:
        'Every file of src/ belongs to a layer of .dependency-cruiser.cjs (or the server): give a new folder its place in LAYERS.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/', pathNot: PLACED },
    },
    {
      name: 'outside-the-layers-imports',
      comment:
        'Every file of src/ belongs to a layer of .dependency-cruiser.cjs (or the server): give a new folder its place in LAYERS.',
      severity: 'error',
      from: { path: '^src/', pathNot: PLACED },
      to: { path: '^src/' },
    },
    {
      name: 'engines-stay-apart',
      comment: 'The download and upload engines share only what lies below them.',
      severity: 'error',
      from: { path: '^src/(download|upload)/' },
      to: { path: '^src/(download|upload)/', pathNot: '^src/$1/' },
    },
    {
      name: 'engines-through-their-entry',
      comment:
        'sync and the engines take an engine only through its entry module (download/engine.ts, upload/engine.ts, coverage/run.ts) and its types.ts; what more they share belongs below them, in data-root or lower.',
      severity: 'error',
      from: { path: '^src/(download|upload|coverage|sync)/' },
      to: {
        path: '^src/(download|upload|coverage)/',
        pathNot:
          '^src/($1/|(download|upload)/engine\\.ts$|coverage/run\\.ts$|(download|upload|coverage)/types\\.ts$)',
      },
    },
    ...downloadRooms,
    {
      name: 'data-root-through-its-entry',
      comment:
        'Outside data-root/, the data root is reached through its entry only (data-root/index.ts: the DataRoot and the helpers it lends); its other files are its own.',
      severity: 'error',
      from: { path: '^src/(?!data-root/)' },
      to: { path: '^src/data-root/(?!index\\.ts$)' },
    },
    {
      name: 'download-stands-alone',
      comment: 'coverage reads the data root; the download and upload engines never need coverage.',
      severity: 'error',
      from: { path: '^src/(download|upload)/' },
      to: { path: '^src/coverage/' },
    },
    {
      name: 'commands-stay-apart',
      comment:
        'A command body (src/cli/commands/<name>.ts with its <name>-*.ts) imports no other command: what two commands share moves to a module of src/cli/.',
      severity: 'error',
      from: { path: '^src/cli/commands/([^/.-]+)[^/]*\\.ts$' },
      to: { path: '^src/cli/commands/', pathNot: '^src/cli/commands/$1(\\.ts|-[^/]*\\.ts)$' },
    },
    {
      name: 'server-on-naming-and-core',
      comment: 'The reference server stands on the naming rules and core only, never on the client.',
      severity: 'error',
      from: { path: '^src/server/' },
      to: { path: '^src/', pathNot: '^src/(core|naming|server)/' },
    },
    {
      name: 'server-only-through-serve',
      comment:
        "Only the serve command loads the reference server; the client never pays for it. serve's declaration reads only the backends' light registry, for its flags (light-declarations.test.ts).",
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: '^src/(server/|cli/(commands/serve-[\\w-]+|commands/serve|declarations/serve)\\.ts$)',
      },
      to: { path: '^src/server/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type from above ties a layer to it as much as a value does.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.d\\.ts$' },
  },
};
