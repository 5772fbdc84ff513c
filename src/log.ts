// One-line structured log records on stderr; stdout stays free for command output.

export type LogLevel = 'info' | 'warn' | 'error';

export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

function write(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
  const record = { time: new Date().toISOString(), level, message, ...fields };
  process.stderr.write(JSON.stringify(record) + '\n');
}

export const logger: Logger = {
  info: (message, fields) => write('info', message, fields),
  warn: (message, fields) => write('warn', message, fields),
  error: (message, fields) => write('error', message, fields),
};
