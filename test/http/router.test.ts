// Route matching: parameters, 405 candidates, HEAD on GET routes, trailing slashes, escapes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Router } from '../../src/http/router.ts';
import type { Route } from '../../src/http/types.ts';

const handler = () => ({ status: 200 });
const routes: Route[] = [
  { method: 'GET', pattern: '/public/instance/:vmId', handler },
  { method: 'GET', pattern: '/public/instance/:vmId/tags', handler },
  { method: 'POST', pattern: '/public/instance/:vmId/tags', handler },
  { method: 'DELETE', pattern: '/public/instance/:vmId/tags/:tag', handler },
];
const router = new Router(routes);

test('matches with decoded parameters', () => {
  const match = router.match('DELETE', '/public/instance/vm%3A1/tags/team');
  assert.equal(match.kind, 'found');
  assert.deepEqual(match.kind === 'found' && match.params, { vmId: 'vm:1', tag: 'team' });
});

test('HEAD matches GET routes; other methods list what is allowed', () => {
  assert.equal(router.match('HEAD', '/public/instance/a').kind, 'found');
  assert.deepEqual(router.match('PUT', '/public/instance/a/tags'), { kind: 'wrongMethod', allowed: ['GET', 'POST', 'HEAD'] });
});

test('unknown paths and empty parameters do not match', () => {
  assert.equal(router.match('GET', '/public/instance').kind, 'none');
  assert.equal(router.match('GET', '/public/instance/').kind, 'none');
  assert.equal(router.match('GET', '/public/instance/a/b/c/d').kind, 'none');
  assert.equal(router.match('GET', '/public/instance/a/tags/').kind, 'found');
});

test('a parameter that does not percent-decode is taken as written: its route answers, not a 404 for no route', () => {
  for (const raw of ['%E0%A4%A', '%ED%A0%80', 'a%zz', '%']) {
    const match = router.match('GET', `/public/instance/${raw}/tags`);
    assert.equal(match.kind, 'found', raw);
    assert.deepEqual(match.kind === 'found' && match.params, { vmId: raw });
  }
});
