// The node:http baseline (a child process): answers fixed responses, so a ratio to it measures the server, not the handler.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BaselineRoute {
  path: string;
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

// The parent sends the routes over IPC; when it goes away (even killed), so does this server.
process.once('message', (routes: BaselineRoute[]) => {
  const byPath = new Map(routes.map((route) => [route.path, route]));
  const server = createServer((request, response) => {
    const route = byPath.get(request.url ?? '');
    if (route === undefined) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(route.status, { ...route.headers, 'Content-Length': route.body.byteLength });
    response.end(route.body);
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`baseline: http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
});
process.on('disconnect', () => process.exit(0));
