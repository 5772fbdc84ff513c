// x-api-key authentication (decisions §2): keys resolve to a user and scopes; lookups are cached briefly.
import { ApiError } from '../errors.ts';
import { findKeyByHash, hashKey } from '../storage/keys.ts';
import { SCOPES } from '../storage/records.ts';
import type { Store } from '../storage/store.ts';
import type { Principal } from './types.ts';

/** Keys created or revoked by the CLI take effect within this time (decisions §2: 10 s). */
const CACHE_MS = 5_000;

export class Authenticator {
  readonly #store: Store;
  readonly #staticKey: string | null;
  readonly #clock: () => number;
  readonly #cache = new Map<string, { principal: Principal | null; until: number }>();

  constructor(store: Store, staticKey: string | null, clock: () => number) {
    this.#store = store;
    this.#staticKey = staticKey;
    this.#clock = clock;
  }

  authenticate(apiKey: string | undefined): Principal {
    if (apiKey === undefined || apiKey === '') throw new ApiError('UNAUTHORIZED', 'missing x-api-key header');
    if (this.#staticKey !== null && apiKey === this.#staticKey) return { userId: 'admin', scopes: SCOPES, keyId: 'static' };
    const now = this.#clock();
    let entry = this.#cache.get(apiKey);
    if (entry === undefined || entry.until < now) {
      const record = findKeyByHash(this.#store, hashKey(apiKey));
      const principal = record === undefined || record.revokedAt !== null ? null : { userId: record.userId, scopes: record.scopes, keyId: record.keyId };
      entry = { principal, until: now + CACHE_MS };
      // Unknown keys are cached too, but the cache stays bounded against key-guessing floods.
      if (this.#cache.size > 10_000) this.#cache.clear();
      this.#cache.set(apiKey, entry);
    }
    if (entry.principal === null) throw new ApiError('UNAUTHORIZED', 'unknown or revoked API key');
    return entry.principal;
  }
}
