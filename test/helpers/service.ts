// Starts the real service (`jvmlens serve`) as a child process on free ports with a temporary data directory.
import { checkResponse } from './openapi.ts';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVE_NODE_FLAGS } from '../../src/node-flags.ts';

export const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
/** The repository root (tests run from dist/test). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface RunningService {
  gatewayUrl: string;
  apiUrl: string;
  /** A key with every scope (the service's --api-key). */
  apiKey: string;
  dataDir: string;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** SIGTERM and wait for the exit code; removes the data directory unless `keepData`. */
  stop(options?: { keepData?: boolean; signal?: NodeJS.Signals }): Promise<number | null>;
}

export interface StartOptions {
  args?: string[];
  env?: Record<string, string>;
  /** Reuse a data directory (e.g. to test a restart); a fresh one otherwise. */
  dataDir?: string;
  /** Wait until health is UP (default true). */
  waitReady?: boolean;
  /** Pass no --api-key (the service then creates an admin key on first start). */
  noStaticKey?: boolean;
  /** Run the TypeScript source under Deno instead of the build under Node. */
  deno?: boolean;
}

export { freePort } from '../../src/free-port.ts';

export function tempDir(prefix = 'jvmlens-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startService(options: StartOptions = {}): Promise<RunningService> {
  const dataDir = options.dataDir ?? tempDir();
  const apiKey = `test_${randomBytes(12).toString('hex')}`;
  const args = ['serve', '--gateway-port', '0', '--api-port', '0', '--data-dir', dataDir, '--workers', '1', '--shutdown-grace-ms', '100'];
  if (!options.noStaticKey) args.push('--api-key', apiKey);
  args.push(...(options.args ?? []));
  const [command, prefix] = options.deno
    ? [join(ROOT, 'node_modules', '.bin', 'deno'), ['run', '-A', join(ROOT, 'src', 'main.ts')]]
    : [process.execPath, [...SERVE_NODE_FLAGS, MAIN]];
  const child = spawn(command, [...prefix, ...args], { cwd: ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const urls = await new Promise<{ gatewayUrl: string; apiUrl: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in time:\n${out}\n${err}`)), 120_000);
    const check = () => {
      const gateway = /jvmlens: gateway (http:\/\/[^ ]+)/.exec(out);
      const api = /jvmlens: api (http:\/\/[^ ]+)\/public/.exec(out);
      if (gateway && api) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve({ gatewayUrl: gateway[1], apiUrl: api[1] });
      }
    };
    child.stdout!.on('data', check);
    exited.then((code) => reject(new Error(`service exited with ${code}:\n${out}\n${err}`)));
  });
  const service: RunningService = {
    ...urls,
    apiKey,
    dataDir,
    child,
    stdout: () => out,
    stderr: () => err,
    async stop({ keepData = false, signal = 'SIGTERM' } = {}) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const code = await exited;
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
  if (options.waitReady !== false) {
    // A service that never turns UP is stopped here: the failing test has no handle to stop it, and its
    // process would keep the test file (and npm test) running.
    await waitForHealth(service, 200).catch(async (error: unknown) => {
      await service.stop({ signal: 'SIGKILL' });
      throw new Error(`${(error as Error).message}; its log:\n${err}`);
    });
  }
  return service;
}

export async function waitForHealth(service: RunningService, status: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${service.gatewayUrl}/opthub-health`).catch(() => null);
    if (response !== null) {
      await response.arrayBuffer();
      if (response.status === status) return;
    }
    if (Date.now() > deadline) throw new Error(`health did not answer ${status} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Runs a jvmlens CLI command to completion; one still running after `timeoutMs` (0: no limit) is stopped (SIGTERM, code null). */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 0): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface JsonResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** fetch with JSON in and out; the body is parsed when it is JSON. */
export async function request<T = any>(url: string, init: { method?: string; key?: string | null; body?: unknown; rawBody?: string | Buffer; contentType?: string; headers?: Record<string, string> } = {}): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== undefined && init.key !== null) headers['x-api-key'] = init.key;
  let body: string | Buffer | undefined;
  if (init.rawBody !== undefined) body = init.rawBody;
  else if (init.body !== undefined) body = JSON.stringify(init.body);
  if (body !== undefined) headers['content-type'] = init.contentType ?? 'application/json';
  // A copy into a plain Uint8Array: Deno's fetch types do not take a Buffer, whose memory may be shared.
  // A redirect (GET /) is the answer checked, not the page it leads to.
  const response = await fetch(url, { method: init.method ?? 'GET', headers, body: typeof body === 'string' || body === undefined ? body : new Uint8Array(body), redirect: 'manual' });
  const text = await response.text();
  checkResponse(init.method ?? 'GET', url, response.status, response.headers.get('content-type') ?? '', text);
  let parsed: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json') && text !== '') parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}
