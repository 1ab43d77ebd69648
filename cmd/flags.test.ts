import { describe, expect, it } from 'vitest';
import { FlagError, parseCommandLine, parseManagerFlags, withoutIgnoredHncFlags } from './flags.js';

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

  it('lowers the controller thread to nice 10 by default, to --reconciler-nice N, not at all with 0, and refuses a value off 0-19', () => {
    expect(parseManagerFlags([]).reconcilerNice).toBe(10);
    expect(parseManagerFlags(['--reconciler-nice', '5']).reconcilerNice).toBe(5);
    expect(parseManagerFlags(['--reconciler-nice=0']).reconcilerNice).toBe(0);
    expect(() => parseManagerFlags(['--reconciler-nice', '20'])).toThrow('--reconciler-nice must be a whole number from 0 to 19, not "20"');
  });

  it('serves the webhooks over the lean HTTP layer by default, over node with --webhook-http-server node, and refuses others', () => {
    expect(parseManagerFlags([]).webhookHttpServer).toBe('lean');
    expect(parseManagerFlags(['--webhook-http-server', 'node']).webhookHttpServer).toBe('node');
    expect(() => parseManagerFlags(['--webhook-http-server=h2'])).toThrow('--webhook-http-server must be one of lean, node, not "h2"');
  });

  it('leaves the admission thread’s priority by default, raises it with --admission-nice=-N, and refuses a value off -20 to 0', () => {
    expect(parseManagerFlags([]).admissionNice).toBe(0);
    expect(parseManagerFlags(['--admission-nice=-5']).admissionNice).toBe(-5);
    expect(parseManagerFlags(['--admission-nice=-20']).admissionNice).toBe(-20);
    expect(() => parseManagerFlags(['--admission-nice', '5'])).toThrow('--admission-nice must be a whole number from -20 to 0, not "5"');
    expect(() => parseManagerFlags(['--admission-nice=-21'])).toThrow('--admission-nice must be a whole number from -20 to 0, not "-21"');
    // No admission thread to raise: refused, not silently ignored.
    expect(() => parseManagerFlags(['--admission-nice=-5', '--webhooks-on-main-thread'])).toThrow(
      "--admission-nice raises the webhooks' own thread, which --webhooks-on-main-thread does not start",
    );
    expect(() => parseManagerFlags(['--no-webhooks', '--admission-nice=-5'])).toThrow(
      "--admission-nice raises the webhooks' own thread, which --no-webhooks does not start",
    );
    expect(parseManagerFlags(['--admission-nice=0', '--webhooks-on-main-thread']).admissionNice).toBe(0);
  });

  it('sends the calls a review waits on over the lean client by default, over node with --webhook-api-client node, and refuses others', () => {
    expect(parseManagerFlags([]).webhookApiClient).toBe('lean');
    expect(parseManagerFlags(['--webhook-api-client', 'node']).webhookApiClient).toBe('node');
    expect(() => parseManagerFlags(['--webhook-api-client=http2'])).toThrow('--webhook-api-client must be one of lean, node, not "http2"');
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
