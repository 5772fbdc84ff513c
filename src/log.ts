// One-line structured log records on stderr; stdout stays free for command output.

export type LogLevel = 'info' | 'warn' | 'error';

export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

function write(level: LogLevel, fixed: Record<string, unknown>, message: string, fields?: Record<string, unknown>): void {
  // `fixed` spread last too: a call's field of the same name (a node it speaks of) cannot replace the writer's.
  const record = { time: new Date().toISOString(), level, ...fixed, message, ...fields, ...fixed };
  process.stderr.write(JSON.stringify(record) + '\n');
}

/**
 * A logger whose every record carries `fixed`: a cluster node's id, so that the records of many nodes, once
 * gathered in one place, tell which node wrote each.
 */
export function loggerWith(fixed: Record<string, unknown>): Logger {
  return {
    info: (message, fields) => write('info', fixed, message, fields),
    warn: (message, fields) => write('warn', fixed, message, fields),
    error: (message, fields) => write('error', fixed, message, fields),
  };
}

export const logger: Logger = loggerWith({});
