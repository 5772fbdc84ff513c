// GET /opthub-health on the gateway (interface §4.1, decisions §3).
import type { ServiceContext } from '../service-context.ts';
import type { Route } from '../types.ts';

const HEADERS = { 'Cache-Control': 'no-store' };

/** What health answers: UP (200) or DOWN (503), and the note that says why or what is degraded. */
export function healthBody(up: boolean, note: string): { healthState: 'UP' | 'DOWN'; code: number; message: string; note: string } {
  return { healthState: up ? 'UP' : 'DOWN', code: up ? 200 : 503, message: up ? 'jvmlens is ready' : 'jvmlens is not ready', note };
}

export function healthRoutes(context: ServiceContext): Route[] {
  // Probes call this constantly: the body is serialised once per distinct state.
  let last: { note: string; raw: string } | null = null;
  const handler = () => {
    const reason = context.readiness.reason();
    const up = reason === null;
    const status = up ? 200 : 503;
    const note = reason ?? context.readiness.degradation() ?? '';
    if (last === null || last.note !== note) last = { note, raw: JSON.stringify(healthBody(up, note)) };
    return { status, headers: HEADERS, raw: last.raw, contentType: 'application/json' };
  };
  return [{ method: 'GET', pattern: '/opthub-health', handler }];
}
