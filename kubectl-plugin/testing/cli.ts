// The whole command line against the in-memory API, as the command tests run it.
import type { GlobalFlags } from '../cli/global-flags.js';
import { captureIo } from '../io.js';
import { runCli } from '../program.js';
import { FakeApi } from './fake-api.js';

/** Runs `kubectl hns <args>`; `flags` are the global flags of each connection it made. */
export async function cli(args: string[], api: FakeApi = new FakeApi(), contextNamespace = 'default') {
  const io = captureIo();
  const flags: GlobalFlags[] = [];
  const code = await runCli(args, {
    io,
    connect: async (f) => {
      flags.push(f);
      return { api, namespace: f.namespace ?? contextNamespace };
    },
    now: () => new Date('2025-06-01T12:00:00Z'),
  });
  return { code, stdout: io.stdout, stderr: io.stderr, flags, api };
}
