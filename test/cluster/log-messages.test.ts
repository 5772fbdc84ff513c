// How health, logs and `jvmlens cluster status` say the state of the log's replicas and a failed request to NATS.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errors } from '@nats-io/transport-node';
import { describeNatsError, replicaState } from '../../src/cluster/log.ts';

test('a log replica is current, catching up, offline, or named silent once not heard from for 5 s', () => {
  assert.equal(replicaState({ current: true, offline: false, active: 200e6 }), 'current');
  assert.equal(replicaState({ current: false, offline: false, active: 1.2e9 }), 'catching up');
  assert.equal(replicaState({ current: false, offline: false, active: 46.4e9 }), 'not heard from for 46 s');
  assert.equal(replicaState({ current: false, offline: true, active: 46.4e9 }), 'offline');
});

test('a NATS request that timed out says what did not answer; other errors keep their message', () => {
  assert.match(describeNatsError(new errors.TimeoutError()), /^JetStream did not answer in time \(.*electing a leader\)$/);
  assert.equal(describeNatsError(new Error('stream not found')), 'stream not found');
});
