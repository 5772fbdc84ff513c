// Holds a cluster node's ports while it rebuilds itself from a copy of another node's data (src/cli/serve.ts):
// health answers DOWN with why, as the node did, and every other request 503 NOT_READY with Retry-After, so a
// load balancer sees the node DOWN rather than refusing connections, and no other socket takes a port in the
// meantime. A chaos run's node copied for 28 s with its ports closed, and could not listen again: an outgoing
// connection can be given such a port (one the system chose, in its ephemeral range). Another cause was
// found later: a listener given port 0 left its closed connections in TIME_WAIT without SO_REUSEADDR, which
// kept every listener off the port (src/http/server.ts now picks the port itself).
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { ApiError, errorBody } from '../errors.ts';
import { healthBody } from './routes/health.ts';

const RETRY_AFTER_S = '1';

export class PortPlaceholder {
  readonly #servers: Server[];

  private constructor(servers: Server[]) {
    this.#servers = servers;
  }

  /** Listens on each port until `release`; rejects, holding none, where one cannot be had. */
  static async hold(host: string, ports: readonly number[], why: string): Promise<PortPlaceholder> {
    const health = JSON.stringify(healthBody(false, why));
    const notReady = JSON.stringify(errorBody(new ApiError('NOT_READY', `service not ready: ${why}`)));
    const servers: Server[] = [];
    try {
      for (const port of ports) {
        const server = createServer((request, response) => {
          const isHealth = request.method === 'GET' && request.url?.split('?')[0] === '/opthub-health';
          // The body is not read: the connection is not kept for another request.
          response.writeHead(503, { 'content-type': 'application/json', 'cache-control': 'no-store', connection: 'close', ...(isHealth ? {} : { 'retry-after': RETRY_AFTER_S }) });
          response.end(isHealth ? health : notReady);
        });
        servers.push(server);
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, host, () => resolve());
        });
      }
    } catch (error) {
      await new PortPlaceholder(servers).release();
      throw error;
    }
    return new PortPlaceholder(servers);
  }

  /** Closes the ports and every connection on them, for the service to listen on them again. */
  async release(): Promise<void> {
    await Promise.all(this.#servers.map((server) => new Promise<void>((resolve) => {
      if (!server.listening) {
        resolve();
        return;
      }
      server.close(() => resolve());
      server.closeAllConnections();
    })));
  }
}
