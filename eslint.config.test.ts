// The layering rules of eslint.config.js, proved on probe sources: each forbidden import is
// reported, and the allowed ones next to it are not (docs/architecture.md, "Layers").
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

// Probe files do not exist, so the type-aware rules (which need the TypeScript project) are off.
const eslint = new ESLint({
  cwd: import.meta.dirname,
  overrideConfig: {
    languageOptions: { parserOptions: { projectService: false } },
    rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off' },
  },
});

async function restricted(filePath: string, specifier: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import '${specifier}';\n`, { filePath });
  const fatal = result!.messages.find((m) => m.fatal);
  if (fatal) throw new Error(`${filePath}: ${fatal.message}`);
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const forbidden: [file: string, imports: string[]][] = [
  [
    'core/forest/probe.ts',
    [
      '../../controller/manager.js',
      '../../webhooks/index.js',
      '../../kubectl-plugin/main.js',
      '../../kube/client.js',
      '../../cmd/manager.js',
      '../../test/support/cluster.js',
      '../../bench/util.js',
      '../../local-cluster/index.js',
      'node:fs',
      'node:fs/promises',
      'node:http',
      // No node: built-in at all, with or without the prefix: none is I/O-free enough to need one.
      'node:tls',
      'node:dns',
      'node:os',
      'node:worker_threads',
      'node:crypto',
      'node:util',
      'node:path',
      'tls',
      'os',
      'util',
      'fs/promises',
      'pino',
      '@kubernetes/client-node',
      // Nor the test helpers.
      '../hierarchy/testing.js',
    ],
  ],
  // The core's test helpers are as pure as the core.
  ['core/hierarchy/testing.ts', ['node:fs', 'node:os', '../../kube/client.js']],
  ['core/probe.ts', ['../controller/manager.js', '../kube/client.js']],
  ['core/forest/deep/deeper/probe.ts', ['../../../../controller/manager.js']],
  ['core/forest/probe.test.ts', ['../../controller/manager.js', '../../kube/writer.js', '../../test/support/cluster.js']],
  [
    'kube/watch/probe.ts',
    [
      '../../controller/manager.js',
      '../../webhooks/index.js',
      '../../kubectl-plugin/main.js',
      '../../cmd/flags.js',
      '../../test/support/cluster.js',
      '../../local-cluster/index.js',
    ],
  ],
  ['kube/probe.test.ts', ['../test/support/cluster.js', '../local-cluster/index.js']],
  // Production code never imports a test helper: testing.ts, testing-*.ts or testing/, in any folder.
  ['kube/probe.ts', ['./testing.js', './testing-https.js', '../core/hierarchy/testing.js']],
  ['kube/watch/probe.ts', ['../testing.js', '../testing-https.js']],
  ['controller/objects/probe.ts', ['../testing.js', '../../kube/testing.js']],
  ['webhooks/probe.ts', ['./testing.js', '../kube/testing-https.js']],
  ['kubectl-plugin/commands/probe.ts', ['../testing/fake-api.js', '../../kube/testing.js']],
  ['cmd/manager.ts', ['../kube/testing.js', '../controller/testing.js']],
  ['cmd/start.ts', ['../kube/testing.js']],
  ['local-cluster/probe.ts', ['../kube/testing-https.js']],
  ['scripts/probe.ts', ['../kube/testing.js']],
  ['deploy/probe.ts', ['../webhooks/testing.js']],
  [
    'controller/objects/probe.ts',
    [
      '../../webhooks/index.js',
      '../../kubectl-plugin/main.js',
      '../../cmd/flags.js',
      '../../test/support/manager.js',
      '../../bench/util.js',
      '../../local-cluster/index.js',
    ],
  ],
  [
    'webhooks/probe.ts',
    ['../controller/manager.js', '../kubectl-plugin/main.js', '../test/support/cluster.js', '../local-cluster/index.js'],
  ],
  ['kubectl-plugin/commands/probe.ts', ['../../controller/manager.js', '../../webhooks/index.js', '../../test/support/cluster.js']],
  ['cmd/manager.ts', ['../local-cluster/index.js', '../test/support/cluster.js', '../bench/util.js']],
  ['cmd/hnc.ts', ['../local-cluster/index.js']],
  ['cmd/start.ts', ['../test/support/cluster.js']],
  ['local-cluster/probe.ts', ['../test/support/cluster.js', '../controller/manager.js', '../cmd/flags.js']],
  ['deploy/probe.test.ts', ['../local-cluster/index.js']],
];

const allowed: [file: string, imports: string[]][] = [
  ['core/forest/probe.ts', ['../api/constants.js', '../../core/util/equal.js', 'yaml']],
  ['core/forest/probe.test.ts', ['node:fs', 'vitest', '../hierarchy/testing.js']],
  // Bare names are matched exactly: a folder of the core called like a built-in is no built-in.
  ['core/forest/probe.ts', ['../util/equal.js', './path.js']],
  // Tests and the helpers themselves may import the helpers.
  ['kube/probe.test.ts', ['./testing.js', './testing-https.js']],
  ['kube/testing.ts', ['./testing-https.js', 'node:https']],
  ['controller/testing.ts', ['../kube/testing.js']],
  ['controller/objects/probe.test.ts', ['../testing.js', '../../kube/testing.js']],
  ['webhooks/probe.test.ts', ['./testing.js', '../kube/testing-https.js']],
  ['kubectl-plugin/commands/probe.test.ts', ['../testing/fake-api.js']],
  ['kubectl-plugin/testing/probe.ts', ['./fake-api.js', '../../kube/testing.js']],
  ['test/support/probe.ts', ['../../kube/testing.js']],
  ['bench/probe.ts', ['../kube/testing-https.js']],
  ['kube/watch/probe.ts', ['../../core/api/constants.js', '../client.js', 'pino', 'node:https']],
  ['controller/objects/probe.ts', ['../../kube/writer.js', '../../core/propagation/decide.js', '../manager.js']],
  ['webhooks/probe.ts', ['../kube/client.js', '../core/validation/decision.js']],
  ['cmd/manager.ts', ['../controller/manager.js', '../webhooks/index.js', './flags.js']],
  ['cmd/start.ts', ['../local-cluster/index.js', './hnc.js']],
  ['local-cluster/probe.ts', ['../kube/client.js', '../core/api/constants.js']],
  ['test/support/probe.ts', ['../../local-cluster/index.js', '../../controller/manager.js']],
  ['bench/probe.ts', ['../local-cluster/index.js', '../test/support/cluster.js']],
];

describe('layering lint (eslint.config.js)', () => {
  // The first lint loads the whole configuration (typescript-eslint and its parser): seconds on a
  // busy machine, paid once here rather than inside the first case's 5 s.
  beforeAll(() => eslint.lintText('', { filePath: 'core/warm-up.ts' }), 60_000);

  for (const [file, imports] of forbidden)
    for (const specifier of imports)
      it(`reports ${file} importing ${specifier}`, async () => {
        expect(await restricted(file, specifier)).toHaveLength(1);
      });

  for (const [file, imports] of allowed)
    for (const specifier of imports)
      it(`allows ${file} importing ${specifier}`, async () => {
        expect(await restricted(file, specifier)).toEqual([]);
      });
});
