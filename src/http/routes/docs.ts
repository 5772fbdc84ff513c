// The API described: GET /public/openapi.json (the OpenAPI 3.1 document) and GET /docs, an interactive
// reference rendered from it by swagger-ui-dist, every asset served from the package itself (no CDN).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ApiError } from '../../errors.ts';
import { openApiDocument } from '../openapi/document.ts';
import type { Route } from '../types.ts';

/**
 * The files of swagger-ui-dist the page loads, with their content types. A Map, not a plain object: a name
 * from the URL such as `constructor` must find nothing, not Object's members.
 */
const ASSETS = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['swagger-ui-standalone-preset.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
]);

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>jvmlens API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script>
window.ui = SwaggerUIBundle({ url: '/public/openapi.json', dom_id: '#reference', deepLinking: true, persistAuthorization: false,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });
</script>
</body>
</html>
`;

export function docsRoutes(version: string): Route[] {
  const folder = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const assets = new Map<string, Buffer>();
  const document = Buffer.from(JSON.stringify(openApiDocument(version)));
  // The assets change only with the package: a day of caching, revalidated after.
  const cached = { 'cache-control': 'public, max-age=86400' };
  return [
    { method: 'GET', pattern: '/public/openapi.json', handler: () => ({ status: 200, contentType: 'application/json', raw: document }) },
    { method: 'GET', pattern: '/docs', handler: () => ({ status: 200, contentType: 'text/html; charset=utf-8', raw: PAGE, headers: { 'cache-control': 'no-cache' } }) },
    {
      method: 'GET',
      pattern: '/docs/assets/:file',
      handler: (request) => {
        const { file } = request.params;
        const type = ASSETS.get(file);
        if (type === undefined) throw new ApiError('NOT_FOUND', `no asset '${file}'; assets: ${[...ASSETS.keys()].join(', ')}`);
        let bytes = assets.get(file);
        if (bytes === undefined) assets.set(file, (bytes = readFileSync(join(folder, file))));
        return { status: 200, contentType: type, raw: bytes, headers: cached };
      },
    },
  ];
}
