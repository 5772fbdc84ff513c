// POST /agent/v1/events on the gateway: agent ingestion (decisions §4).
import { ApiError } from '../../errors.ts';
import { UnknownVmsError } from '../../storage/ingest.ts';
import type { ServiceContext } from '../service-context.ts';
import type { Route } from '../types.ts';

export function agentRoutes(context: ServiceContext): Route[] {
  return [
    {
      method: 'POST',
      pattern: '/agent/v1/events',
      scope: 'ingest',
      needsReady: true,
      ownBarrier: true,
      handler: async (request) => {
        const contentType = request.headers['content-type'] ?? '';
        const now = context.clock();
        try {
          // A write that storage cannot take is answered 507 by the server, which turns health DOWN.
          const accepted = await context.writes.events({ body: request.body, contentType, now });
          return { status: 200, body: { accepted } };
        } catch (error) {
          if (error instanceof UnknownVmsError) throw new ApiError('UNKNOWN_VM', error.message, error.details);
          throw error;
        }
      },
    },
  ];
}
