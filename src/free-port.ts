// A TCP port free on 127.0.0.1 at the time of asking: for the local nats-server processes of
// `npm run cluster:local`, and for tests that start servers of their own.
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
