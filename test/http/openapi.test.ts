// The OpenAPI document: valid OpenAPI 3.1, served without a key, covering every route the service has, an
// example per operation; the conformance helper that checks every test's responses can fail; and the
// reference page at /docs renders the operations in a real browser.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { agentRoutes } from '../../src/http/routes/agent.ts';
import { consoleRoutes } from '../../src/http/routes/console.ts';
import { cveRoutes } from '../../src/http/routes/cve.ts';
import { docsRoutes } from '../../src/http/routes/docs.ts';
import { explorerRoutes } from '../../src/http/routes/explorer.ts';
import { healthRoutes } from '../../src/http/routes/health.ts';
import { identityRoutes } from '../../src/http/routes/identity.ts';
import { metricsRoutes } from '../../src/http/routes/metrics.ts';
import { reportRoutes } from '../../src/http/routes/reports.ts';
import { sbomRoutes } from '../../src/http/routes/sbom.ts';
import type { Route } from '../../src/http/types.ts';
import { browserMissing, launchBrowser } from '../helpers/browser.ts';
import { checkResponse, invalidExamples } from '../helpers/openapi.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

type Json = Record<string, any>;

let service: RunningService;
let document: Json;

before(async () => {
  service = await startService();
  const response = await request(`${service.apiUrl}/public/openapi.json`, { key: null });
  assert.equal(response.status, 200, 'served without a key');
  document = response.body as Json;
});
after(() => service.stop());

/** Every route the service registers: the route tables are built (never called) without a running service. */
function serviceRoutes(): Route[] {
  const none = {} as never;
  return [healthRoutes(none), agentRoutes(none), metricsRoutes(none), explorerRoutes(none), sbomRoutes(none), reportRoutes(none, none), cveRoutes(none, none), identityRoutes(), docsRoutes('test'), consoleRoutes()].flat();
}

describe('OpenAPI document', () => {
  it('is valid OpenAPI 3.1', async () => {
    assert.equal(document.openapi, '3.1.0');
    const result = await new Validator().validate(document);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
  });

  it('documents every route of both listeners, with the security scheme and scopes', () => {
    const documented = new Set(Object.entries(document.paths as Json).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`)));
    const served = serviceRoutes().map((route) => `${route.method} ${route.pattern.replace(/:([A-Za-z]+)/g, '{$1}')}`);
    for (const route of served) assert.ok(documented.has(route), `${route} is documented`);
    assert.equal(documented.size, served.length, 'and nothing else');
    assert.deepEqual(document.components.securitySchemes.apiKey, { ...document.components.securitySchemes.apiKey, type: 'apiKey', in: 'header', name: 'x-api-key' });
    assert.deepEqual(document.paths['/public/instance/{vmId}/tags'].post.security, [{ apiKey: ['write'] }]);
    assert.deepEqual(document.paths['/public/openapi.json'].get.security, []);
  });

  it('has an example in every operation and the error body for each error status', () => {
    for (const [path, methods] of Object.entries(document.paths as Json)) {
      for (const [method, operation] of Object.entries(methods as Json)) {
        const examples = JSON.stringify(operation).includes('"example"');
        assert.ok(examples, `${method} ${path} has an example`);
        for (const [status, response] of Object.entries(operation.responses as Json)) {
          if (Number(status) >= 400 && path !== '/opthub-health') assert.ok(JSON.stringify(response).includes('#/components/schemas/Error'), `${method} ${path} ${status}`);
        }
      }
    }
  });

  it('gives examples that its own schemas accept', () => {
    assert.deepEqual(invalidExamples(), []);
  });

  it('lists the statuses the server gives on any operation: 400 for a repeated key or unknown consistency, 413 for a body too large', async () => {
    const operations = Object.entries(document.paths as Json).flatMap(([path, methods]) => Object.entries(methods as Json).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation: operation as Json })));
    const urlOf = (path: string, operation: Json) => `${operation.servers === undefined ? service.apiUrl : service.gatewayUrl}${path.replace(/\{\w+\}/g, 'x')}`;
    for (const { path, method, operation } of operations) {
      const url = urlOf(path, operation);
      // `request` fails on a status the document does not list for the operation.
      if (operation.security.length > 0) {
        const bogus = await request(url, { method, key: service.apiKey, headers: { 'x-jvmlens-consistency': 'bogus' } });
        assert.equal(bogus.status, 400, `${method} ${path}`);
        const repeated = await withRepeatedKey(url, method);
        assert.equal(repeated.status, 400, `${method} ${path}`);
        checkResponse(method, url, repeated.status, repeated.contentType, repeated.body);
      }
      if (method !== 'GET') {
        const size = path.startsWith('/agent') ? 17 * 1024 * 1024 : 2 * 1024 * 1024;
        assert.equal((await request(url, { method, key: service.apiKey, rawBody: Buffer.alloc(size, 0x20) })).status, 413, `${method} ${path}`);
      }
    }
  });

  it('checks responses: a body that drifts from the document fails the test that received it', () => {
    const url = `${service.apiUrl}/public/instance/vm-1`;
    assert.throws(() => checkResponse('GET', url, 200, 'application/json', JSON.stringify({ vmId: 'vm-1' })), /does not match the OpenAPI document/);
    assert.throws(() => checkResponse('GET', url, 418, 'application/json', '{}'), /status 418 is not documented/);
    assert.throws(() => checkResponse('GET', url, 404, 'application/json', JSON.stringify({ error: 'REPORT_NOT_FOUND', message: 'x' })), /does not match/);
    checkResponse('GET', url, 404, 'application/json', JSON.stringify({ error: 'VM_NOT_FOUND', message: "no VM with vmId 'vm-1'" }));
  });
});

describe('reference page', () => {
  it('serves its assets from the service with their content types and caching', async () => {
    const page = await fetch(`${service.apiUrl}/docs`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const html = await page.text();
    assert.ok(!/https?:\/\/(?!localhost)/.test(html.replace(/http:\/\/www\.w3\.org[^"]*/g, '')), 'no asset from another host');
    for (const [file, type] of [['swagger-ui-bundle.js', /^text\/javascript/], ['swagger-ui.css', /^text\/css/]] as const) {
      const asset = await fetch(`${service.apiUrl}/docs/assets/${file}`);
      assert.equal(asset.status, 200, file);
      assert.match(asset.headers.get('content-type') ?? '', type);
      assert.match(asset.headers.get('cache-control') ?? '', /max-age=86400/);
      await asset.arrayBuffer();
    }
    const missing = await request(`${service.apiUrl}/docs/assets/secret.txt`);
    assert.equal(missing.status, 404);
    // The page, its assets and the console are in the document too: `request` checks them against it.
    for (const path of ['/docs', '/docs/assets/swagger-ui.css', '/docs/assets/favicon-32x32.png', '/console/', '/console/app.js', '/console/style.css', '/console/vendor/preact.mjs']) {
      assert.equal((await request(`${service.apiUrl}${path}`)).status, 200, path);
    }
    assert.equal((await request(`${service.apiUrl}/`)).status, 302);
  });

  it('lists every operation in a real browser', async (t) => {
    const missing = browserMissing();
    if (missing !== null) return t.skip(missing);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`${service.apiUrl}/docs`);
      await page.waitForSelector('.opblock-summary-path', { timeout: 30_000 });
      const operations = Object.values(document.paths as Json).reduce((sum: number, methods) => sum + Object.keys(methods as Json).length, 0);
      await page.waitForFunction((count) => document.querySelectorAll('.opblock').length >= count, operations, { timeout: 30_000 });
      const paths = await page.$$eval('.opblock-summary-path', (nodes) => nodes.map((node) => node.getAttribute('data-path') ?? node.textContent ?? ''));
      for (const path of ['/public/cve/events', '/public/component/report/schedule', '/public/instance/{vmId}/sbom']) assert.ok(paths.some((shown) => shown.includes(path)), `${path} is listed`);
      await page.screenshot({ path: join(tempDir('jvmlens-docs-'), 'docs.png'), fullPage: false });
    } finally {
      await browser.close();
    }
  });
});

/** A request with its x-api-key header twice, which fetch would join into one; the status, type and body. */
async function withRepeatedKey(url: string, method: string): Promise<{ status: number; contentType: string; body: string }> {
  const { hostname, port, pathname } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.end(`${method} ${pathname} HTTP/1.1\r\nhost: ${hostname}\r\nx-api-key: ${service.apiKey}\r\nx-api-key: ${service.apiKey}\r\nconnection: close\r\n\r\n`);
  let text = '';
  for await (const chunk of socket) text += String(chunk);
  const [head, body] = text.split('\r\n\r\n', 2);
  return { status: Number(head.split(' ')[1]), contentType: /^content-type: *(.*)$/im.exec(head)?.[1] ?? '', body };
}
