// A node behind the cluster's log: health turns DOWN past 5 s of work and UP again only under 1 s, so an
// estimate that hovers near the threshold does not take the node in and out of the load balancer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CatchUpHealth } from '../../src/cluster/catch-up.ts';

test('DOWN past 5 s behind, and UP again only once under 1 s', () => {
  const health = new CatchUpHealth();
  assert.equal(health.note(0), null);
  assert.equal(health.note(4_900), null, 'UP under 5 s');
  assert.equal(health.note(14_200), 'catching up: this node needs about 14 s to apply what the cluster log holds');
  assert.match(health.note(4_800) ?? 'UP', /^catching up: this node needs about 5 s/, 'still DOWN while it needs 1 s or more');
  assert.match(health.note(1_200) ?? 'UP', /^catching up: this node needs about 1 s/);
  assert.match(health.note(6_000) ?? 'UP', /^catching up/);
  assert.equal(health.note(900), null, 'UP again under 1 s');
  assert.equal(health.note(4_900), null, 'and stays UP under 5 s');
  assert.match(health.note(5_100) ?? 'UP', /^catching up/, 'DOWN again past 5 s');
});
