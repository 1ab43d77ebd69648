// Where commands write. Commands never touch process.stdout directly, so tests capture output.

export interface Io {
  /** Normal output (stdout). */
  out(text: string): void;
  /** Errors and warnings (stderr). */
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

/** An Io that keeps what was written, for tests. */
export function captureIo(): Io & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    out(text: string) {
      io.stdout += text;
    },
    err(text: string) {
      io.stderr += text;
    },
  };
  return io;
}
