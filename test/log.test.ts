// Log records (src/log.ts): a cluster node's records say which node wrote them, whatever fields a call passes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loggerWith } from '../src/log.ts';

/** The records `write` puts on stderr, parsed. */
function recordsOf(write: () => void): Record<string, unknown>[] {
  const lines: string[] = [];
  const original = process.stderr.write;
  process.stderr.write = ((chunk: string) => lines.push(chunk) > 0) as typeof process.stderr.write;
  try {
    write();
  } finally {
    process.stderr.write = original;
  }
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

test('a record names the node that wrote it, also where the call names another node', () => {
  const logger = loggerWith({ node: 'n1' });
  const [record] = recordsOf(() => logger.warn('a node did not give its report partition; it runs here', { node: 'n2', peer: 'n2', reason: 'timeout' }));
  assert.equal(record.node, 'n1');
  assert.equal(record.peer, 'n2');
  assert.equal(record.reason, 'timeout');
  assert.equal(record.level, 'warn');
});
