// Settings: defaults, environment, flags (the flag wins), and clear errors (decisions §1).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, defaultConfig, parseConfig } from '../../src/config.ts';

test('defaults follow decisions §1', () => {
  const config = defaultConfig();
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.gatewayPort, 8080);
  assert.equal(config.apiPort, 8090);
  assert.equal(config.dataDir, './data');
  assert.ok(config.workers >= 1);
  assert.equal(config.apiKey, null);
  assert.equal(config.offlineAfterMs, 300_000);
  assert.equal(config.reportTimeoutMs, 600_000);
  assert.equal(config.pageBytes, 5_500_000);
  assert.equal(config.reportTtlDays, 30);
});

test('environment variables set values and flags win over them', () => {
  const env = { JVMLENS_GATEWAY_PORT: '9000', JVMLENS_API_PORT: '9001', JVMLENS_API_KEY: 'from-env', JVMLENS_WORKERS: '3' };
  const { config, rest } = parseConfig(['serve', '--gateway-port', '9100', '--api-key=from-flag', '--data-dir', '/tmp/x'], env);
  assert.deepEqual(rest, ['serve']);
  assert.equal(config.gatewayPort, 9100);
  assert.equal(config.apiPort, 9001);
  assert.equal(config.apiKey, 'from-flag');
  assert.equal(config.workers, 3);
  assert.equal(config.dataDir, '/tmp/x');
});

test('bad values are errors that name the setting', () => {
  assert.throws(() => parseConfig(['--gateway-port', 'eighty'], {}), (e: Error) => e instanceof ConfigError && /--gateway-port/.test(e.message));
  assert.throws(() => parseConfig([], { JVMLENS_WORKERS: '0' }), (e: Error) => e instanceof ConfigError && /JVMLENS_WORKERS.*at least 1/.test(e.message));
  assert.throws(() => parseConfig(['--page-bytes'], {}), /needs a value/);
});
