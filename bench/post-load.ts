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
  /** Bodies acknowledged. */
  requests: number;
  /** Answers 503 with Retry-After, each waited out before the body went again. */
  refused: number;
  items: number;
  /** From the first request to the last answer. */
  seconds: number;
  latencies: Samples;
}

/** How long a body refused with 503 and Retry-After is sent again for before the run fails: a service stuck refusing. */
const REFUSED_FOR_MS = 60_000;

function post(agent: Agent, url: URL, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string; retryAfterS: number | null }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.byteLength) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      const retryAfter = Number(response.headers['retry-after'] ?? Number.NaN);
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString(), retryAfterS: Number.isFinite(retryAfter) ? retryAfter : null }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/**
 * Every body must be acknowledged (200): a benchmark of rejected batches would measure the error path. A 503
 * with Retry-After is the service asking the sender to wait, as a cluster node catching up does: the body
 * goes again after that long, as an agent's would, and its latency runs from its first send.
 */
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
  let refused = 0;
  let failed = false;
  const connection = async () => {
    try {
      while (!failed && sent < limit && performance.now() < deadline) {
        const body = spec.next(sent++);
        const begun = performance.now();
        for (;;) {
          const { status, text, retryAfterS } = await post(agent, url, spec.headers, body.bytes);
          if (status === 200) break;
          if (status !== 503 || retryAfterS === null || performance.now() - begun > REFUSED_FOR_MS) throw new Error(`POST ${spec.url} answered ${status}: ${text.slice(0, 2000)}`);
          refused++;
          await new Promise((resolve) => setTimeout(resolve, retryAfterS * 1000));
        }
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
  return { requests: latencies.count, refused, items, seconds: (performance.now() - started) / 1000, latencies };
}
