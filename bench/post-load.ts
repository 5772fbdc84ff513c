// POST load from the bench process: a fixed number of keep-alive connections, each sending its next body as soon as the last is answered.
import { Agent, request } from 'node:http';
import { Samples } from './stats.ts';

export interface PostBody {
  bytes: Buffer;
  /** What the body carries (e.g. code items), summed into the result. */
  items: number;
}

export interface PostLoadSpec {
  url: string;
  headers: Record<string, string>;
  connections: number;
  /** Stop starting requests after this many seconds... */
  seconds?: number;
  /** ...or after this many requests, whichever comes first. */
  requests?: number;
  /** The next body to send; called once per request, in order. */
  next(index: number): PostBody;
}

export interface PostLoadResult {
  requests: number;
  items: number;
  /** From the first request to the last answer. */
  seconds: number;
  latencies: Samples;
}

function post(agent: Agent, url: URL, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.byteLength) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Every answer must be 200: a benchmark of rejected batches would measure the error path. */
export async function runPostLoad(spec: PostLoadSpec): Promise<PostLoadResult> {
  if (spec.seconds === undefined && spec.requests === undefined) throw new Error('runPostLoad needs seconds or requests');
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
  const url = new URL(spec.url);
  const latencies = new Samples();
  const started = performance.now();
  const deadline = started + (spec.seconds ?? Number.POSITIVE_INFINITY) * 1000;
  const limit = spec.requests ?? Number.POSITIVE_INFINITY;
  let sent = 0;
  let items = 0;
  let failed = false;
  const connection = async () => {
    try {
      while (!failed && sent < limit && performance.now() < deadline) {
        const body = spec.next(sent++);
        const begun = performance.now();
        const { status, text } = await post(agent, url, spec.headers, body.bytes);
        if (status !== 200) throw new Error(`POST ${spec.url} answered ${status}: ${text.slice(0, 2000)}`);
        latencies.add(performance.now() - begun);
        items += body.items;
      }
    } catch (error) {
      failed = true;
      throw error;
    }
  };
  // allSettled: the other connections stop at their next turn, before the agent goes.
  const outcomes = await Promise.allSettled(Array.from({ length: spec.connections }, connection));
  agent.destroy();
  const failure = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
  return { requests: latencies.count, items, seconds: (performance.now() - started) / 1000, latencies };
}
