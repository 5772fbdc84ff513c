// A few rounds of the kill -9 loop (bench/kill-loop.ts): every acknowledged batch survives a SIGKILL whole.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runKillLoop } from '../../bench/kill-loop.ts';

test('SIGKILL during ingestion, four times: no acknowledged batch lost, none partial', async () => {
  const result = await runKillLoop(4);
  assert.equal(result.kills, 4);
  assert.ok(result.acknowledged > 0, 'some batches were acknowledged before the kills');
  assert.equal(result.lost, 0);
  assert.equal(result.partial, 0);
});
