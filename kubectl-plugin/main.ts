// Entry point of `kubectl-hns`. The connection (and, for exec or auth-provider users only,
// @kubernetes/client-node) loads only when a command connects; see program.ts.
import pc from 'picocolors';
import { processIo } from './io.js';
import { runCli } from './program.js';

// A reader that stops early (`kubectl hns get pods -w | head -3`) closes the pipe: end quietly, as
// kubectl ends on SIGPIPE, instead of an uncaught EPIPE.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const colors = pc.createColors(pc.isColorSupported && (process.stderr.isTTY === true || 'FORCE_COLOR' in process.env));

process.exitCode = await runCli(process.argv.slice(2), {
  io: processIo,
  connect: async (flags) => (await import('./connection.js')).connect(flags),
  errorPrefix: (s) => colors.red(s),
});
