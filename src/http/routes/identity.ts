// GET /public/me: who a key is and what it may do, so a client (the console) can offer only what the key allows.
import type { Route } from '../types.ts';

export function identityRoutes(): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/public/me',
      scope: 'read',
      handler: (request) => ({ status: 200, body: { userId: request.principal!.userId, scopes: request.principal!.scopes } }),
    },
  ];
}
