import { describe, expect, it } from 'vitest';
import { HNC_BOOLEAN_FLAGS, HNC_VALUE_FLAGS, IGNORED_BY_HNC_TS } from '../core/migration/flags.js';
import { FlagError, MANAGER_FLAG_HELP, parseCommandLine, parseManagerFlags, withoutIgnoredHncFlags } from './flags.js';

describe('manager flags', () => {
  it("accepts HNC's shipped manifest args, ignoring those hnc-ts does not need", () => {
    const argv = [
      '--enable-internal-cert-management',
      '--cert-restart-on-secret-refresh',
      '--enable-stackdriver=false',
      '--excluded-namespace=kube-system',
      '--hrq-sync-interval',
      '1m',
      '--max-reconciles=10',
    ];
    expect(withoutIgnoredHncFlags(argv)).toEqual({
      args: ['--excluded-namespace=kube-system', '--hrq-sync-interval', '1m', '--max-reconciles=10'],
      ignored: ['enable-internal-cert-management', 'cert-restart-on-secret-refresh', 'enable-stackdriver'],
    });
    const flags = parseManagerFlags(argv);
    expect(flags.workers).toBe(10);
    expect(flags.objectWorkers).toBe(32);
    expect(parseManagerFlags(['--max-object-reconciles', '8']).objectWorkers).toBe(8);
    expect(flags.policy.isManaged('kube-system')).toBe(false);
  });

  it('starts with a retired hnc-ts flag still in its Deployment, ignoring it', () => {
    const argv = ['--webhook-local-authorization=false', '--max-reconciles=4', '--webhook-local-authorization'];
    expect(withoutIgnoredHncFlags(argv)).toEqual({
      args: ['--max-reconciles=4'],
      ignored: ['webhook-local-authorization', 'webhook-local-authorization'],
    });
    expect(parseManagerFlags(argv).workers).toBe(4);
  });

  it('enables hierarchical quotas with --enable-hrq, re-checked every --hrq-sync-interval', () => {
    expect(parseManagerFlags([]).hrq).toBeUndefined();
    expect(parseManagerFlags(['--enable-hrq=false', '--hrq-sync-interval=5s']).hrq).toBeUndefined();
    expect(parseManagerFlags(['--enable-hrq']).hrq).toEqual({ syncIntervalMs: 60_000 });
    expect(parseManagerFlags(['--enable-hrq=true', '--hrq-sync-interval', '1m30s']).hrq).toEqual({ syncIntervalMs: 90_000 });
    expect(parseManagerFlags(['--enable-hrq', '--hrq-sync-interval=0']).hrq).toEqual({ syncIntervalMs: 0 });
    expect(parseManagerFlags(['--enable-hrq', '--hrq-sync-interval=500ms']).hrq).toEqual({ syncIntervalMs: 500 });
    expect(() => parseManagerFlags(['--enable-hrq', '--hrq-sync-interval=soon'])).toThrow(
      '--hrq-sync-interval must be a duration such as 30s, 1m or 1m30s, not "soon"',
    );
    expect(() => parseManagerFlags(['--enable-hrq=yes'])).toThrow('--enable-hrq takes true or false, not "yes"');
  });

  it('parses no-propagation labels and refuses malformed ones', () => {
    expect(parseManagerFlags(['--nopropagation-label', 'a=b']).propagation.noPropagationLabels).toEqual([{ key: 'a', value: 'b' }]);
    expect(() => parseManagerFlags(['--nopropagation-label', '=b'])).toThrow(FlagError);
    expect(() => parseManagerFlags(['--nopropagation-label', 'a=b=c'])).toThrow(
      '--nopropagation-label must be KEY=VALUE with a non-empty key, not "a=b=c"',
    );
  });

  it('has no performance switches: the retired ones are ignored (an upgraded Deployment still starts), not offered', () => {
    const argv = [
      '--webhook-http-server=node',
      '--webhook-api-client',
      'node',
      '--reconciler-nice=0',
      '--admission-nice=-5',
      '--max-reconciles=3',
    ];
    expect(withoutIgnoredHncFlags(argv)).toEqual({
      args: ['--max-reconciles=3'],
      ignored: ['webhook-http-server', 'webhook-api-client', 'reconciler-nice', 'admission-nice'],
    });
    expect(MANAGER_FLAG_HELP).not.toMatch(/webhook-http-server|webhook-api-client|-nice|local-authorization/);
  });

  it('refuses a non-numeric --max-reconciles', () => {
    expect(() => parseManagerFlags(['--max-reconciles', 'many'])).toThrow(
      '--max-reconciles must be a whole number of at least 1, not "many"',
    );
  });
});

describe('an entry point’s command line', () => {
  it('takes the shared options and its own, says which the user set, and drops the HNC flags it ignores', () => {
    const { values, given, ignored } = parseCommandLine(
      ['--kubeconfig', '/k', '--max-reconciles=3', '--enable-stackdriver', '--ephemeral', '--state-dir', '/s'],
      { ephemeral: { type: 'boolean', default: false }, 'state-dir': { type: 'string' } },
    );
    expect(values).toMatchObject({ kubeconfig: '/k', 'max-reconciles': '3', ephemeral: true, 'state-dir': '/s', help: false });
    expect([...given].sort()).toEqual(['ephemeral', 'kubeconfig', 'max-reconciles', 'state-dir']);
    expect(ignored).toEqual(['enable-stackdriver']);
  });

  it('refuses an option neither the entry point nor the manager knows', () => {
    expect(() => parseCommandLine(['--ephemeral'], {})).toThrow(/Unknown option '--ephemeral'/);
  });
});

describe("the migration check's table of HNC's flags (core/migration/flags.ts)", () => {
  /** A valid value for each of HNC's flags that take one. */
  const VALUE: Record<string, string> = {
    'max-reconciles': '10',
    'apiserver-qps-throttle': '50',
    'webhook-server-port': '9443',
    'nopropagation-label': 'k=v',
  };
  const accepted = (flag: string) => {
    const arg = (HNC_BOOLEAN_FLAGS as readonly string[]).includes(flag) ? `--${flag}` : `--${flag}=${VALUE[flag] ?? '1m'}`;
    return flag === 'kubeconfig' ? parseCommandLine([arg], {}) : parseManagerFlags([arg]);
  };

  it('names as ignored exactly the HNC flags the manager ignores', () => {
    for (const flag of [...HNC_BOOLEAN_FLAGS, ...HNC_VALUE_FLAGS]) {
      const { ignored } = withoutIgnoredHncFlags([`--${flag}=${(HNC_BOOLEAN_FLAGS as readonly string[]).includes(flag) ? 'true' : 'x'}`]);
      expect(ignored.length > 0, flag).toBe((IGNORED_BY_HNC_TS as readonly string[]).includes(flag));
    }
  });

  it('lists only flags the manager accepts', () => {
    for (const flag of [...HNC_BOOLEAN_FLAGS, ...HNC_VALUE_FLAGS]) expect(() => accepted(flag), flag).not.toThrow();
  });
});
