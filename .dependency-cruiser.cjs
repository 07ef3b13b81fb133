// The layers of loanql and the one direction imports may go (`npm run lint`; README "Architecture").
// Each layer may import any layer after it in LAYERS, never one before it:
//
//   server → api | dashboard → http → app → engine → metadata → db → domain
//
// `api/` and `dashboard/` sit side by side and never import each other (the server wires what
// one needs of the other); `cli/` stands beside the service and uses `app/` and the layers below
// it. Inside the engine, `engine/plan` (document → IR) never imports `engine/sql` (IR → SQL).
// tests/, bench/ and the dashboard's browser bundle (dashboard/client/) are not checked.

/** Outermost first: a folder may import the folders after it. */
const LAYERS = ['server', 'api|dashboard', 'http', 'app', 'engine', 'metadata', 'db', 'domain'];

const folder = (names) => `^(${names})/`;

/** For each layer: no import of a layer before it (its own siblings included, for api|dashboard). */
const layerRules = LAYERS.flatMap((layer, index) => {
  const outer = LAYERS.slice(0, index).join('|');
  if (!outer) return [];
  return [
    {
      name: `${layer.replace('|', '-or-')}-imports-only-inner-layers`,
      comment: `${layer} may import only ${LAYERS.slice(index + 1).join(', ') || 'nothing of loanql'}: ${outer} are outer layers`,
      severity: 'error',
      from: { path: folder(layer) },
      to: { path: folder(outer) },
    },
  ];
});

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'api-not-dashboard',
      comment: 'api/ and dashboard/ are side by side: the server wires what one needs of the other',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^dashboard/' },
    },
    {
      name: 'dashboard-not-api',
      comment: 'api/ and dashboard/ are side by side: the server wires what one needs of the other',
      severity: 'error',
      from: { path: '^dashboard/' },
      to: { path: '^api/' },
    },
    {
      name: 'cli-imports-app-and-below',
      comment: 'the CLI calls app/ use cases (and the layers below): never the HTTP service',
      severity: 'error',
      from: { path: '^cli/' },
      to: { path: '^(server|api|dashboard|http)/' },
    },
    {
      name: 'nothing-imports-cli',
      comment: 'cli/ is an entry point, like server/: nothing imports it',
      severity: 'error',
      from: { pathNot: '^cli/' },
      to: { path: '^cli/' },
    },
    {
      name: 'plan-not-sql',
      comment: 'engine/plan makes the IR and never renders it: engine/sql depends on engine/plan, not the reverse',
      severity: 'error',
      from: { path: '^engine/plan/' },
      to: { path: '^engine/sql/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|tests|bench|dashboard/client)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
