import { builtinModules } from 'node:module';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers (docs/architecture.md, "Layers"). Patterns match a folder at any depth, so
// '../../controller/x.js' is caught as well as '../controller/x.js'. ESLint keeps only the last
// no-restricted-imports that matches a file, so each file gets one block listing everything
// its folder must not import. eslint.config.test.ts proves each rule with probe sources.
const folder = (name) => [`**/${name}`, `**/${name}/**`];
const forbid = (names, message) => ({ group: names.flatMap(folder), message });
// core/ is pure: no node: built-in at all (none is pure enough to need an exception, and none is
// used). Bare names ('fs', 'util') are matched exactly (paths), so that '../util/equal.js' is not.
const PURE = 'core/ is pure: no node: built-ins (no I/O, no processes, threads or host state).';
const noBuiltins = { group: ['node:*'], message: PURE };
const builtinPaths = builtinModules.filter((m) => !m.startsWith('_')).map((name) => ({ name, message: PURE }));
const notProduction = (from) => forbid(['test', 'bench'], `${from} is production code: it must not import test/ or bench/.`);
const noLocalCluster = (from) =>
  forbid(['local-cluster'], `${from} must not import local-cluster/ (only cmd/start.ts, test/ and bench/ run the local control plane).`);
// The test helpers (kube/testing.ts, kube/testing-https.ts, controller/testing.ts, kubectl-plugin/testing/...)
// are for tests and for each other, never for production code.
const TEST_CODE = ['**/*.test.ts', '**/testing.ts', '**/testing-*.ts', '**/testing/**'];
const noTesting = {
  group: ['**/testing', '**/testing.js', '**/testing.ts', '**/testing-*', '**/testing/**'],
  message: 'Production code must not import the test helpers (testing.ts, testing-*.ts, testing/): they are for tests.',
};
const restrict = (files, patterns, ignores = [], paths = []) => ({
  files,
  ignores,
  rules: { 'no-restricted-imports': ['error', { paths, patterns }] },
});
/**
 * The rules of `files`, and the test helpers forbidden to those that are production code: two
 * blocks, the test code among `files` (tests and the helpers themselves) in the second.
 */
const layer = (files, patterns, ignores = [], paths = []) => [
  restrict(files, [...patterns, noTesting], [...ignores, ...TEST_CODE], paths),
  restrict(
    files.flatMap((f) => TEST_CODE.map((t) => [f, t])),
    patterns,
    ignores,
    paths,
  ),
];

function layers() {
  const shells = ['controller', 'webhooks', 'kubectl-plugin'];
  const core = [
    forbid(['kube', ...shells, 'cmd'], 'core/ is pure: it imports only core/ and pure libraries.'),
    { group: ['@kubernetes/client-node', 'pino'], message: 'core/ is pure: no client, no logger.' },
    notProduction('core/'),
    noLocalCluster('core/'),
  ];
  return [
    // The core's own test helpers (core/*/testing.ts) are pure as well.
    ...layer(['core/**/*.ts'], [noBuiltins, ...core], [], builtinPaths),
    // Tests of the pure core may read fixtures from disk (e.g. the CRD YAML under crds/).
    restrict(['core/**/*.test.ts'], core),
    ...layer(
      ['kube/**/*.ts'],
      [
        forbid([...shells, 'cmd'], 'kube/ is shared I/O: it imports only core/ and libraries.'),
        notProduction('kube/'),
        noLocalCluster('kube/'),
      ],
    ),
    // The three shells never import each other; shared needs go down into core/ or kube/.
    ...shells.flatMap((shell) =>
      layer(
        [`${shell}/**/*.ts`],
        [
          forbid(
            [...shells.filter((s) => s !== shell), 'cmd'],
            `${shell}/ must not import ${shells.filter((s) => s !== shell).join('/ or ')}/ or cmd/.`,
          ),
          notProduction(`${shell}/`),
          noLocalCluster(`${shell}/`),
        ],
      ),
    ),
    // The image ships cmd/manager.ts and what it imports; only the npm start launcher runs a local cluster.
    ...layer(['cmd/**/*.ts'], [notProduction('cmd/'), noLocalCluster('cmd/ (but start.ts)')], ['cmd/start.ts']),
    ...layer(['cmd/start.ts'], [notProduction('cmd/start.ts')]),
    ...layer(
      ['local-cluster/**/*.ts'],
      [forbid([...shells, 'cmd'], 'local-cluster/ imports only core/ and kube/.'), notProduction('local-cluster/')],
    ),
    ...layer(['deploy/**/*.ts', 'scripts/**/*.ts', '*.ts', '*.js'], [noLocalCluster('This file')]),
  ];
}

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
      // Prettier wraps code at 140 (npm run lint checks it); this catches what it leaves: comments.
      'max-len': ['error', { code: 140, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true }],
    },
  },
  {
    // Type-aware checks: an unawaited promise loses its error; a promise where a callback's
    // return is ignored (an event handler) runs unobserved.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  ...layers(),
);
