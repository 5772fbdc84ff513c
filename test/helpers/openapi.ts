// Response conformance: every response a test receives through the common helpers is checked against
// the OpenAPI document's schema for its operation and status, so the document cannot drift from the service.
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { openApiDocument } from '../../src/http/openapi/document.ts';

type Json = Record<string, any>;

const document = openApiDocument('test');
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormatsModule as unknown as (ajv: Ajv2020) => void)(ajv);
ajv.addSchema(document, 'openapi');

/** Path templates, literal ones first: /public/component/report/schedule before /public/component/report/{reportId}. */
const templates = Object.keys(document.paths as Json)
  .map((path) => ({ path, pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`), params: (path.match(/\{/g) ?? []).length }))
  .sort((a, b) => a.params - b.params);

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

function validate(schemaPointer: string, value: unknown, label: string): void {
  const check = ajv.getSchema(`openapi#/${schemaPointer}`);
  assert.ok(check, `no schema at ${schemaPointer}`);
  if (!check(value)) assert.fail(`${label}: the response does not match the OpenAPI document: ${ajv.errorsText(check.errors)}\n${JSON.stringify(value).slice(0, 600)}`);
}

/** Checks one response against the document; an unknown path or method must still answer the error body. */
export function checkResponse(method: string, url: string, status: number, contentType: string, text: string): void {
  // As the router reads it (router.ts): segment by segment, undecoded, a trailing slash dropped.
  const path = new URL(url).pathname.replace(/(.)\/$/, '$1');
  const label = `${method} ${path} → ${status}`;
  const template = templates.find((candidate) => candidate.pattern.test(path) && (document.paths as Json)[candidate.path][method.toLowerCase()] !== undefined)
    ?? templates.find((candidate) => candidate.pattern.test(path));
  const operation = template === undefined ? undefined : (document.paths as Json)[template.path][method.toLowerCase()];
  if (template === undefined || operation === undefined) {
    // No such route or method: decisions §10's error body (404 or 405).
    if (text !== '') validate(pointer('components', 'schemas', 'Error'), JSON.parse(text), label);
    return;
  }
  const response = operation.responses[String(status)];
  assert.ok(response, `${label}: status ${status} is not documented for ${template.path}`);
  if (response.content === undefined) {
    assert.equal(text, '', `${label}: documented without a body`);
    return;
  }
  const type = Object.keys(response.content).find((documented) => documented.split(';')[0] === contentType.split(';')[0].trim());
  assert.ok(type, `${label}: content type ${contentType} is not documented (${Object.keys(response.content).join(', ')})`);
  if (!type.includes('json')) return;
  validate(pointer('paths', template.path, method.toLowerCase(), 'responses', String(status), 'content', type, 'schema'), JSON.parse(text), label);
}

/** Every example of a response in the document that its own schema refuses, as "where: why". */
export function invalidExamples(): string[] {
  const failures: string[] = [];
  for (const [path, methods] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(methods as Json)) {
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        for (const [type, content] of Object.entries((response.content ?? {}) as Json)) {
          if (content.example === undefined) continue;
          const check = ajv.getSchema(`openapi#/${pointer('paths', path, method, 'responses', status, 'content', type, 'schema')}`)!;
          if (!check(content.example)) failures.push(`${method} ${path} ${status}: ${ajv.errorsText(check.errors)}`);
        }
      }
    }
  }
  return failures;
}
