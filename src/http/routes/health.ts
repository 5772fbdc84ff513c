// GET /opthub-health on the gateway (interface §4.1, decisions §3).
import type { ServiceContext } from '../context.ts';
import type { Route } from '../types.ts';

export function healthRoutes(context: ServiceContext): Route[] {
  const handler = () => {
    const reason = context.readiness.reason();
    const up = reason === null;
    const status = up ? 200 : 503;
    return {
      status,
      headers: { 'Cache-Control': 'no-store' },
      body: {
        healthState: up ? 'UP' : 'DOWN',
        code: status,
        message: up ? 'jvmlens is ready' : 'jvmlens is not ready',
        note: reason ?? '',
      },
    };
  };
  return [{ method: 'GET', pattern: '/opthub-health', handler }];
}
