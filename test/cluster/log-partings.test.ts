// Where two nodes' readings of a window of the log part (src/cluster/log-partings.ts), from each node's own hash
// of each command: what an operator is told to look for when the nodes' windows differ. The nodes tell it as
// they compare their windows (test/cluster/log-checks.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { holdsMore, partingOf } from '../../src/cluster/log-partings.ts';

test('where two readings of a window part: the first command both applied and read otherwise, and where each read the other\'s', () => {
  const mine = Uint32Array.of(11, 12, 13, 14, 15);
  assert.equal(partingOf(101, mine, mine.slice()), null);
  assert.deepEqual(partingOf(101, mine, Uint32Array.of(11, 12, 99, 14, 15)), { seq: 103, otherReadItAt: null, readTheirsAt: null }, 'another write at 103');
  assert.deepEqual(partingOf(101, mine, Uint32Array.of(11, 12, 14, 15, 13)), { seq: 103, otherReadItAt: 105, readTheirsAt: 104 }, 'a write read at another place');
  assert.deepEqual(partingOf(101, mine, Uint32Array.of(0, 12, 0, 14, 16)), { seq: 105, otherReadItAt: null, readTheirsAt: null }, 'commands one did not apply are passed over');
});

test('which of two readings holds, where they part, commands the other lacks: the one the other\'s command there is found later in', () => {
  const full = Uint32Array.of(11, 12, 13, 14, 15, 16);
  const short = Uint32Array.of(11, 12, 15, 16, 17, 18);
  assert.equal(holdsMore(101, full, short), true, 'short lacks 13 and 14, every later command shifted by two');
  assert.equal(holdsMore(101, short, full), false);
  assert.equal(holdsMore(101, full, Uint32Array.of(11, 12, 99, 14, 15, 16)), false, 'another write: neither holds more');
  assert.equal(holdsMore(101, full, full.slice()), false, 'alike');
});
