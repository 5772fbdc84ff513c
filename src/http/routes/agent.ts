// POST /agent/v1/events on the gateway: agent ingestion (decisions §4).
import { decodeEventBody, validateEvents } from '../../ingest/events.ts';
import type { ServiceContext } from '../context.ts';
import type { Route } from '../types.ts';

export function agentRoutes(context: ServiceContext): Route[] {
  return [
    {
      method: 'POST',
      pattern: '/agent/v1/events',
      scope: 'ingest',
      needsReady: true,
      handler: async (request) => {
        const events = validateEvents(decodeEventBody(request.body, request.headers['content-type'] ?? ''));
        let result;
        try {
          result = await context.ingestor.ingest(events);
        } catch (error) {
          if ((error as { status?: number }).status === undefined) context.readiness.storageWritable((error as Error).message);
          throw error;
        }
        for (const record of result.touched) context.liveness.update(record);
        const counts = new Map<string, number>();
        for (const event of events) counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
        for (const [type, count] of counts) context.metrics.recordEvents(type, count);
        context.afterIngest(result);
        return { status: 200, body: { accepted: result.accepted } };
      },
    },
  ];
}
