import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers (docs/architecture.md, "Layers"). Patterns match a folder at any depth, so
// '../../controller/x.js' is caught as well as '../controller/x.js'. ESLint keeps only the last
// no-restricted-imports that matches a file, so each file gets one block listing everything
// its folder must not import. eslint.config.test.ts proves each rule with probe sources.
const folder = (name) => [`**/${name}`, `**/${name}/**`];
const forbid = (names, message) => ({ group: names.flatMap(folder), message });
const noIo = {
  group: ['node:fs*', 'node:net', 'node:http*', 'node:child_process', 'fs', 'fs/*', 'net', 'http', 'https', 'child_process'],
  message: 'core/ is pure: no I/O.',
};
const notProduction = (from) => forbid(['test', 'bench'], `${from} is production code: it must not import test/ or bench/.`);
const noLocalCluster = (from) =>
  forbid(['local-cluster'], `${from} must not import local-cluster/ (only cmd/start.ts, test/ and bench/ run the local control plane).`);
const restrict = (files, patterns, ignores = []) => ({ files, ignores, rules: { 'no-restricted-imports': ['error', { patterns }] } });

function layers() {
  const shells = ['controller', 'webhooks', 'kubectl-plugin'];
  const core = [
    forbid(['kube', ...shells, 'cmd'], 'core/ is pure: it imports only core/ and pure libraries.'),
    { group: ['@kubernetes/client-node', 'pino'], message: 'core/ is pure: no client, no logger.' },
    notProduction('core/'),
    noLocalCluster('core/'),
  ];
  return [
    restrict(['core/**/*.ts'], [noIo, ...core]),
    // Tests of the pure core may read fixtures from disk (e.g. the CRD YAML under crds/).
    restrict(['core/**/*.test.ts'], core),
    restrict(
      ['kube/**/*.ts'],
      [
        forbid([...shells, 'cmd'], 'kube/ is shared I/O: it imports only core/ and libraries.'),
        notProduction('kube/'),
        noLocalCluster('kube/'),
      ],
    ),
    // The three shells never import each other; shared needs go down into core/ or kube/.
    ...shells.map((shell) =>
      restrict(
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
    restrict(['cmd/**/*.ts'], [notProduction('cmd/'), noLocalCluster('cmd/ (but start.ts)')], ['cmd/start.ts']),
    restrict(['cmd/start.ts'], [notProduction('cmd/start.ts')]),
    restrict(
      ['local-cluster/**/*.ts'],
      [forbid([...shells, 'cmd'], 'local-cluster/ imports only core/ and kube/.'), notProduction('local-cluster/')],
    ),
    restrict(['deploy/**/*.ts', 'scripts/**/*.ts', '*.ts', '*.js'], [noLocalCluster('This file')]),
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
