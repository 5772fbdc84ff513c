// Which reading of a log window is taken as right (src/cluster/right-reading.ts): tables of nodes' hashes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rightReading } from '../../src/cluster/right-reading.ts';

test('the reading taken as right: the one most nodes share, else the first node\'s by id among those that may serve; none from fewer than three', () => {
  const hashes = (entries: Record<string, string>) => new Map(Object.entries(entries));
  const any = () => true;
  assert.deepEqual(rightReading(hashes({ a: 'x', b: 'y', c: 'y' }), any), { crc: 'y', nodes: ['b', 'c'] });
  assert.deepEqual(rightReading(hashes({ c: 'z', b: 'y', a: 'x' }), any), { crc: 'x', nodes: ['a'] }, 'no two alike: the first by id');
  assert.deepEqual(rightReading(hashes({ a: 'x', b: 'y', c: 'z' }), (nodeId) => nodeId !== 'a'), { crc: 'y', nodes: ['b'] }, 'a cannot serve');
  assert.deepEqual(rightReading(hashes({ a: 'x', b: 'x', c: 'y' }), (nodeId) => nodeId === 'b' || nodeId === 'c'), { crc: 'x', nodes: ['a', 'b'] }, 'b serves for the two');
  assert.deepEqual(rightReading(hashes({ a: 'x', b: 'x', c: 'y' }), (nodeId) => nodeId === 'c'), { crc: 'y', nodes: ['c'] }, 'neither of the two can serve');
  assert.deepEqual(rightReading(hashes({ d: 'x', b: 'y', a: 'x', c: 'y' }), any), { crc: 'x', nodes: ['a', 'd'] }, 'as many for each: the group of the first by id');
  assert.equal(rightReading(hashes({ a: 'x', b: 'y' }), any), null, 'two cannot tell');
  assert.equal(rightReading(hashes({ a: 'x', b: 'x', c: 'x' }), any), null, 'all agree');
  assert.equal(rightReading(hashes({ a: 'x', b: 'y', c: 'z' }), () => false), null, 'none can serve');
});

test('where as many nodes read a window one way as another, the reading taken as right is the one that holds commands each of the others lacks where they part, else the first by id', () => {
  const hashes = (entries: Record<string, string>) => new Map(Object.entries(entries));
  const any = () => true;
  // b's history holds every command; a's lacks 13, c's lacks 14: each later command shifted by one.
  const of = new Map([['a', Uint32Array.of(11, 12, 14, 15, 16)], ['b', Uint32Array.of(11, 12, 13, 14, 15)], ['c', Uint32Array.of(11, 12, 13, 15, 16)]]);
  const commands = { from: 1, of };
  assert.deepEqual(rightReading(hashes({ a: 'x', b: 'y', c: 'z' }), any, commands), { crc: 'y', nodes: ['b'], fullest: true }, 'no two alike');
  assert.deepEqual(rightReading(hashes({ a: 'x', b: 'y', c: 'z' }), (nodeId) => nodeId !== 'b', commands), { crc: 'x', nodes: ['a'] }, 'b cannot serve: a holds no more than c, nor c than a');
  assert.deepEqual(rightReading(hashes({ a: 'x', d: 'x', b: 'y', c: 'y' }), any, { from: 1, of: new Map([['d', of.get('a')!], ['c', of.get('b')!]]) }), { crc: 'y', nodes: ['b', 'c'], fullest: true }, 'two and two: told by any node of each reading');
  assert.deepEqual(rightReading(hashes({ a: 'x', b: 'y', c: 'y' }), any, commands), { crc: 'y', nodes: ['b', 'c'] }, 'the most nodes share one: the counts decide');
  assert.deepEqual(rightReading(hashes({ a: 'x', b: 'y', c: 'z' }), any, { from: 1, of: new Map([['a', of.get('a')!], ['c', of.get('c')!]]) }), { crc: 'x', nodes: ['a'] }, 'b recorded none: the first by id');
});
