// The logging surface the watch layer needs. A pino logger fits it as is; the default is silent so
// tests and library users see nothing unless they pass one.

export interface Logger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => {};
export const noopLogger: Logger = { debug: noop, warn: noop, error: noop };
