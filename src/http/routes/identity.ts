// GET /public/me: who a key is and what it may do, so a client (the console) can offer only what the key allows.
import type { Route } from '../types.ts';

export function identityRoutes(): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/public/me',
      scope: 'read',
      // decisions §3: all of /public is 503 while DOWN; the console waits for it (src/console/api.js, whoAmI).
      needsReady: true,
      handler: (request) => ({ status: 200, body: { userId: request.principal!.userId, scopes: request.principal!.scopes } }),
    },
  ];
}
