// The errors the plugin reports, and how each reads on the terminal: one line, no stack trace.
// This file loads nothing heavy, so the entry point can format errors without the kube client.

/** An answer from the API server other than 2xx, reduced to what a user needs to read. */
export class ServerError extends Error {
  override name = 'ServerError';
  constructor(
    /** HTTP status code: 403 for an RBAC denial, 400/403/422 for an admission refusal, ... */
    readonly code: number,
    /** The server's own message, e.g. `admission webhook "..." denied the request: ...`. */
    message: string,
    readonly reason?: string,
  ) {
    super(message);
  }
}

export const isNotFound = (e: unknown): e is ServerError => e instanceof ServerError && e.code === 404;
export const isForbidden = (e: unknown): e is ServerError => e instanceof ServerError && e.code === 403;

/** The cluster could not be reached, or did not answer in time. */
export class ConnectionError extends Error {
  override name = 'ConnectionError';
  constructor(
    readonly server: string,
    readonly detail: string,
  ) {
    super(`Unable to connect to the server at ${server}: ${detail}`);
  }
}

/**
 * A failure the plugin detected itself, with the exact text to print (HNC's wording where HNC has
 * one) and the exit code.
 */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** The text printed for an error (without the trailing newline) and the exit code. */
export function describeError(err: unknown): { text: string; exitCode: number } {
  if (err instanceof CliError) return { text: err.message, exitCode: err.exitCode };
  if (err instanceof ServerError) {
    // A bare 401 is a failed login; HNC's webhooks also answer 401, with a message worth showing.
    if (err.code === 401 && /^unauthorized$/i.test(err.message.trim()))
      return { text: 'Error: You must be logged in to the server (Unauthorized)', exitCode: 1 };
    return { text: `Error: ${oneLine(err.message)}`, exitCode: 1 };
  }
  if (err instanceof Error) return { text: `Error: ${oneLine(err.message)}`, exitCode: 1 };
  return { text: `Error: ${oneLine(String(err))}`, exitCode: 1 };
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').trim();
}
