// HTTP GET load with wrk (C, one thread): it costs the server's machine far less CPU per request than a Node client.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadResult, LoadSpec } from './load-spec.ts';
import { Samples } from './stats.ts';

/** The line the script's done() prints, after wrk's own report. */
const MARK = 'JVMLENS_WRK ';

let available: boolean | undefined;

/** Whether a `wrk` binary is on the PATH (Debian: `apt-get install wrk`). */
export function wrkAvailable(): boolean {
  available ??= spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
  return available;
}

function luaString(text: string): string {
  return JSON.stringify(text); // a JSON string of ASCII paths and header values is a valid Lua string
}

/**
 * Every connection requests the paths in turn; done() prints the counts and the whole latency histogram
 * (µs value, count), so rounds merge into exact percentiles. The histogram is wrk's after its
 * coordinated-omission correction: it holds samples for requests a slow answer held back, so it can
 * count more samples than responses.
 */
function script(spec: LoadSpec): string {
  const headers = Object.entries(spec.headers).map(([name, value]) => `[${luaString(name)}] = ${luaString(value)}`).join(', ');
  return `
local paths = { ${spec.paths.map(luaString).join(', ')} }
local headers = { ${headers} }
local requests = {}
local turn = 0
init = function(args)
  for i, path in ipairs(paths) do requests[i] = wrk.format("GET", path, headers) end
end
request = function()
  turn = turn % #requests + 1
  return requests[turn]
end
done = function(summary, latency, _)
  local e = summary.errors
  local histogram = {}
  for i = 1, #latency do
    local value, count = latency(i)
    histogram[#histogram + 1] = value .. "," .. count
  end
  io.write(string.format('${MARK}{"requests":%d,"durationUs":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"latency":[%s]}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout, table.concat(histogram, ",")))
end
`;
}

interface WrkReport {
  requests: number;
  durationUs: number;
  errors: Record<string, number>;
  /** Flat pairs: latency in µs, then how many responses took it. */
  latency: number[];
}

function parseReport(stdout: string, origin: string): WrkReport {
  const line = stdout.split('\n').find((text) => text.startsWith(MARK));
  if (line === undefined) throw new Error(`wrk on ${origin} printed no report: ${stdout.slice(-500)}`);
  return JSON.parse(line.slice(MARK.length)) as WrkReport;
}

/** Runs wrk against one origin; any socket error, timeout or status ≥ 400 fails the run, since its figures would mislead. */
export async function runWrk(origin: string, spec: LoadSpec): Promise<Omit<LoadResult, 'stealPercent'>> {
  const folder = mkdtempSync(join(tmpdir(), 'jvmlens-wrk-'));
  try {
    const scriptPath = join(folder, 'load.lua');
    writeFileSync(scriptPath, script(spec));
    const args = ['-t1', `-c${spec.connections}`, `-d${Math.max(1, Math.round(spec.seconds))}s`, '--timeout', '10s', '-s', scriptPath, origin];
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
      child.on('error', reject);
      child.on('close', (code) => {
        if (code === 0) resolve(Buffer.concat(out).toString());
        else reject(new Error(`wrk exited ${code}: ${Buffer.concat(err).toString()}${Buffer.concat(out).toString()}`));
      });
    });
    const report = parseReport(stdout, origin);
    const failed = Object.entries(report.errors).filter(([, count]) => count > 0);
    if (failed.length > 0 || report.requests === 0) {
      throw new Error(`load on ${origin}: ${report.requests} requests, errors ${JSON.stringify(Object.fromEntries(failed))}`);
    }
    const latencies = new Samples();
    for (let i = 0; i < report.latency.length; i += 2) {
      const ms = report.latency[i] / 1000;
      for (let n = report.latency[i + 1]; n > 0; n--) latencies.add(ms);
    }
    return { requests: report.requests, seconds: report.durationUs / 1e6, latencies };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
