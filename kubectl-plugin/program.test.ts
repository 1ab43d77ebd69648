// The command line end to end, against the in-memory API: flag parsing, outputs, exit codes.
import { describe, expect, it } from 'vitest';
import { ConnectionError, ServerError } from './errors.js';
import { cli } from './testing/cli.js';
import { FakeApi } from './testing/fake-api.js';
import { versionText } from './version.js';

describe('kubectl-hns', () => {
  it('prints help without arguments and with --help, exit 0', async () => {
    const none = await cli([]);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('Manipulates hierarchical namespaces provided by HNC');
    const help = await cli(['tree', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('-A, --all-namespaces');
    expect(help.stdout).toContain('Global Flags:\n');
    expect(help.stdout).toContain('      --kubeconfig string');
    expect(help.stdout).toContain('  -s, --server string');
    // kubectl's log level as kubectl's help shows it: a Level, no default printed (0 is its zero value).
    expect(help.stdout).toMatch(/\n {2}-v, --v Level {3,}number for the log level verbosity \(4 or more: [^\n]*copies\)\n/);
    expect((await cli(['tree', '-h'])).stdout).toBe(help.stdout);
    expect((await cli(['config'])).stdout).toContain(
      'Available Commands:\n  describe       Displays information about the HNC configuration',
    );
  });

  it('prints the version two ways', async () => {
    expect((await cli(['version'])).stdout).toBe(`${versionText()}\n`);
    const flag = await cli(['--version']);
    expect([flag.code, flag.stdout]).toEqual([0, `${versionText()}\n`]);
    expect(versionText()).toMatch(/^kubectl-hns version /);
  });

  it('rejects unknown commands and flags with one Error line, exit 1', async () => {
    expect(await cli(['frobnicate'])).toMatchObject({ code: 1, stderr: 'Error: unknown command "frobnicate" for "kubectl-hns"\n' });
    expect(await cli(['config', 'nope'])).toMatchObject({ code: 1, stderr: 'Error: unknown command "nope" for "kubectl-hns config"\n' });
    expect(await cli(['tree', '--bogus'])).toMatchObject({ code: 1, stderr: 'Error: unknown flag: --bogus\n' });
    expect(await cli(['tree', '-x'])).toMatchObject({ code: 1, stderr: "Error: unknown shorthand flag: 'x' in -x\n" });
    expect(await cli(['set', 'a', '--parent'])).toMatchObject({ code: 1, stderr: 'Error: flag needs an argument: --parent\n' });
    expect(await cli(['set', 'a', '-a=maybe'])).toMatchObject({
      code: 1,
      stderr: 'Error: invalid argument "maybe" for "-a, --allowCascadingDeletion" flag: use true or false\n',
    });
    expect(await cli(['tree', 'a', '-o', 'xml'])).toMatchObject({
      code: 1,
      stderr: 'Error: invalid argument "xml" for "-o, --output" flag: must be one of json, yaml, dot\n',
    });
    expect(await cli(['create'])).toMatchObject({ code: 1, stderr: 'Error: accepts 1 arg(s) (CHILD), received 0\n' });
    expect(await cli(['get'])).toMatchObject({ code: 1, stderr: "Error: not enough arguments to 'get'\n" });
    expect(await cli(['get', 'a', 'b', 'c'])).toMatchObject({ code: 1, stderr: "Error: too many arguments to 'get'\n" });
  });

  it('takes flags as kubectl users type them: =true/=false, short groups, before the command, after --', async () => {
    const api = new FakeApi().addNamespace('bar');
    const acd = async (...args: string[]) => {
      await cli(['set', 'bar', ...args], api);
      return api.hierarchies.get('bar')?.spec?.allowCascadingDeletion ?? false;
    };
    expect(await acd('--allowCascadingDeletion=true')).toBe(true);
    expect(await cli(['set', 'bar', '--allowCascadingDeletion=false'], api)).toMatchObject({ code: 0, stdout: 'No changes made\n' });
    expect(await cli(['set', '-f', 'bar'], api)).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("Forbidding cascading deletion on 'bar'"),
    });
    expect(await cli(['set', '-rp', 'x', 'bar'], api)).toMatchObject({ code: 1 });
    expect(await cli(['--namespace', 'bar', 'create', 'dev'], api)).toMatchObject({ code: 0 });
    expect(api.anchors.has('bar/dev')).toBe(true);
    expect(await cli(['create', '-nbar', '--', '-odd'], api)).toMatchObject({ code: 0 });
    expect(api.anchors.has('bar/-odd')).toBe(true);
  });

  it('passes kubectl’s standard flags, before or after the command', async () => {
    const api = new FakeApi().addNamespace('a');
    const { flags, code } = await cli(
      [
        '--kubeconfig',
        '/k',
        'tree',
        'a',
        '--context',
        'c',
        '--as',
        'alice',
        '--as-group',
        'g1',
        '--as-group=g2',
        '--request-timeout',
        '2s',
        '--cluster',
        'cl',
        '--user',
        'u',
      ],
      api,
    );
    expect(code).toBe(0);
    expect(flags).toEqual([
      { kubeconfig: '/k', context: 'c', cluster: 'cl', user: 'u', as: 'alice', asGroup: ['g1', 'g2'], requestTimeout: '2s' },
    ]);
  });

  it('create takes the parent from -n only', async () => {
    const ok = await cli(['create', 'dev', '-n', 'team-a', '-l', 'env=dev']);
    expect(ok).toMatchObject({ code: 0, stdout: 'Successfully created "dev" subnamespace anchor in "team-a" namespace\n' });
    expect(ok.api.anchors.get('team-a/dev')?.spec).toEqual({ labels: [{ key: 'env', value: 'dev' }] });
    const missing = await cli(['create', 'dev']);
    expect(missing).toMatchObject({ code: 1, stdout: '', stderr: 'Error: parent must be set via --namespace or -n\n' });
    expect(missing.flags).toEqual([]);
  });

  it('delete defaults the parent to the context’s namespace, as HNC does', async () => {
    const api = new FakeApi();
    api.anchors.set('mine/dev', { metadata: { name: 'dev', namespace: 'mine' } });
    expect(await cli(['delete', 'dev'], api, 'mine')).toMatchObject({
      code: 0,
      stdout: 'Successfully deleted "dev" subnamespace anchor in "mine" namespace\n',
    });
  });

  it('set parses its flags and checks them before connecting', async () => {
    const api = new FakeApi().addNamespace('bar');
    expect(await cli(['set', 'bar', '-p', 'foo', '-a'], api)).toMatchObject({
      code: 0,
      stdout:
        "Setting the parent of bar to foo\nAllowing cascading deletion on 'bar'\nSuccesfully updated 2 properties of the hierarchical configuration of bar\n",
    });
    const bad = await cli(['set', 'bar', '--root', '--parent', 'foo']);
    expect(bad).toMatchObject({ code: 1, stdout: '', stderr: 'Cannot give the namespace a parent and make it a root at the same time\n' });
    expect(bad.flags).toEqual([]);
    expect(await cli(['set', 'bar', '-a', '-f'])).toMatchObject({
      code: 1,
      stderr: 'Cannot set both --allowCascadingDeletion and --forbidCascadingDeletion\n',
    });
  });

  it('tree needs a namespace or -A, and prints -o formats', async () => {
    expect(await cli(['tree'])).toMatchObject({
      code: 1,
      stderr: 'Error: Must specify the root of the tree(s) to display or else specify --all-namespaces\n',
    });
    const api = new FakeApi().addNamespace('a', { children: ['b'] }).addNamespace('b', { parent: 'a', subnamespaceOf: 'a' });
    expect((await cli(['tree', '-A'], api)).stdout).toBe('a\n└── [s] b\n\n[s] indicates subnamespaces\n');
    expect((await cli(['tree', 'a', '-o', 'yaml'], api)).stdout).toContain('  - name: a\n');
    expect((await cli(['tree', 'a', '--output=dot'], api)).stdout).toContain('  "a" -> "b";\n');
  });

  it('describe --object explains one object, and checks its TYPE/NAME before connecting', async () => {
    const api = new FakeApi().addNamespace('a', { children: ['b'] }).addNamespace('b', { parent: 'a' });
    api.objects.set('a/roles', [{ kind: 'Role', metadata: { name: 'r', annotations: { 'propagate.hnc.x-k8s.io/none': 'true' } } }]);
    const out = await cli(['describe', 'b', '--object', 'role/r'], api);
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(out.stdout).toBe(
      [
        'Role r in namespace b: not propagated',
        '  Type: roles (mode Propagate)',
        '  Ancestors, highest first: a',
        '  - a: source, not propagated to b: propagate.hnc.x-k8s.io/none is "true"',
        '  In b: no Role of that name',
        '',
      ].join('\n'),
    );
    const bad = await cli(['describe', 'b', '--object', 'r']);
    expect(bad).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'Error: --object must be TYPE/NAME, e.g. role/admin or secrets/db-password; got "r"\n',
    });
    expect(bad.flags).toEqual([]);
    expect((await cli(['describe', '--help'])).stdout).toContain('kubectl hns describe dev --object role/admin');
  });

  it('prints an admission refusal as one line, exit 1', async () => {
    const api = new FakeApi();
    api.failures.set(
      'create anchor team-b/dev',
      new ServerError(
        403,
        'admission webhook "subnamespaceanchors.hnc.x-k8s.io" denied the request: User "alice" is not authorized to create subnamespaces in "team-b"',
      ),
    );
    expect(await cli(['create', 'dev', '-n', 'team-b'], api)).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'Error: admission webhook "subnamespaceanchors.hnc.x-k8s.io" denied the request: User "alice" is not authorized to create subnamespaces in "team-b"\n',
    });
  });

  it('prints an unreachable cluster as one line, exit 1', async () => {
    const api = new FakeApi();
    api.failures.set('get ns a', new ConnectionError('https://127.0.0.1:1', 'connect ECONNREFUSED 127.0.0.1:1'));
    expect(await cli(['describe', 'a'], api)).toMatchObject({
      code: 1,
      stderr: 'Error: Unable to connect to the server at https://127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1\n',
    });
  });

  it('config subcommands', async () => {
    const api = new FakeApi();
    expect(await cli(['config', 'set-resource', 'secrets', '--mode', 'propagate'], api)).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(api.config?.spec?.resources).toEqual([{ resource: 'secrets', mode: 'Propagate' }]);
    expect(await cli(['config', 'set-resource', 'secrets'], api)).toMatchObject({
      code: 1,
      stderr: 'Error: --mode is required: one of Propagate, Remove, Ignore or AllowPropagate\n',
    });
    expect((await cli(['config', 'describe'], api)).stdout).toBe('Synchronized resources:\n\nConditions:\n');
    expect(await cli(['config', 'delete-type', '--resource', 'secrets'], api)).toMatchObject({
      code: 0,
      stdout: 'Configuration for type with group: , resource: secrets is deleted\n',
    });
    const warn = await cli(
      ['config', 'set-resource', 'secrets', '--mode', 'Propagate'],
      (() => {
        const a = new FakeApi();
        a.config = { metadata: { name: 'config' }, spec: { resources: [{ resource: 'secrets', mode: 'Ignore' }] } };
        return a;
      })(),
    );
    expect(warn.code).toBe(1);
    expect(warn.stderr.split('\n')[1]).toBe("If you are sure you want to proceed with this operation, use the '--force' flag.");
  });
});
