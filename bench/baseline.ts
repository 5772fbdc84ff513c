// Starts the node:http baseline in its own process with the exact responses jvmlens gave for the same paths.
import { fileURLToPath } from 'node:url';
import type { BaselineRoute } from './baseline-server.ts';
import { spawnChild, waitForLine } from './service.ts';

const SERVER = fileURLToPath(new URL('./baseline-server.js', import.meta.url));

/** Headers each server adds by itself; copying them would send them twice. */
const GENERATED = new Set(['date', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'uwebsockets']);

/** GETs each path from a running server and keeps status, body bytes and content headers, to be served again by the baseline. */
export async function mirrorResponses(origin: string, paths: readonly string[], headers: Record<string, string>): Promise<BaselineRoute[]> {
  const routes: BaselineRoute[] = [];
  for (const path of paths) {
    const response = await fetch(`${origin}${path}`, { headers });
    const body = new Uint8Array(await response.arrayBuffer());
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${Buffer.from(body).toString()}`);
    const kept: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      if (!GENERATED.has(name)) kept[name] = value;
    });
    routes.push({ path, status: response.status, headers: kept, body });
  }
  return routes;
}

export interface BaselineServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startBaseline(routes: readonly BaselineRoute[]): Promise<BaselineServer> {
  const child = spawnChild(process.execPath, [SERVER], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], serialization: 'advanced' });
  try {
    child.process.send(routes);
    const line = await waitForLine(child, /baseline: (http:\/\/\S+)/, 30_000);
    return { url: line[1], pid: child.process.pid!, stop: () => child.stop() };
  } catch (error) {
    await child.stop();
    throw error;
  }
}
