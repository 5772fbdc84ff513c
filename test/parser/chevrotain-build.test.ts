// The parser loads Chevrotain's single-file build: the package entry costs every parsing thread ~0.6 s of start-up.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { chevrotainBuild } from '../../src/parser/chevrotain.ts';

it("loads Chevrotain's single-file build, not the package entry", () => {
  assert.equal(chevrotainBuild, 'single file');
});
