// A TCP port free on a host (127.0.0.1 unless told) at the time of asking: for the local nats-server
// processes of `npm run cluster:local`, the service's listeners given port 0 (src/http/server.ts), and tests
// that start servers of their own.
import { createServer } from 'node:net';

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
