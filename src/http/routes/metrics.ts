// GET /metrics on the gateway: Prometheus text format, no key needed (decisions §2).
import type { ServiceContext } from '../service-context.ts';
import type { Route } from '../types.ts';

export function metricsRoutes(context: ServiceContext): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/metrics',
      handler: () => ({ status: 200, raw: context.metrics.render(), contentType: 'text/plain; version=0.0.4; charset=utf-8' }),
    },
  ];
}
