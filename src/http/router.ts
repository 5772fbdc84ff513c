// Route matching by path segments, with the list of allowed methods for a 405.
import type { Route } from './types.ts';

interface CompiledRoute {
  route: Route;
  segments: string[];
}

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'wrongMethod'; allowed: string[] }
  | { kind: 'none' };

export class Router {
  readonly #bySegmentCount = new Map<number, CompiledRoute[]>();

  constructor(routes: readonly Route[]) {
    for (const route of routes) {
      const segments = route.pattern.split('/').slice(1);
      const list = this.#bySegmentCount.get(segments.length) ?? [];
      list.push({ route, segments });
      this.#bySegmentCount.set(segments.length, list);
    }
  }

  match(method: string, path: string): Match {
    const parts = path.split('/').slice(1);
    if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
    const candidates = this.#bySegmentCount.get(parts.length);
    if (candidates === undefined) return { kind: 'none' };
    const allowed: string[] = [];
    for (const { route, segments } of candidates) {
      const params = matchSegments(segments, parts);
      if (params === null) continue;
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { kind: 'found', route, params };
      allowed.push(route.method);
    }
    if (allowed.length === 0) return { kind: 'none' };
    if (allowed.includes('GET')) allowed.push('HEAD');
    return { kind: 'wrongMethod', allowed: [...new Set(allowed)] };
  }
}

function matchSegments(segments: readonly string[], parts: readonly string[]): Record<string, string> | null {
  let params: Record<string, string> | null = null;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    if (segment.startsWith(':')) {
      if (parts[i] === '') return null;
      (params ??= {})[segment.slice(1)] = decoded(parts[i]);
    } else if (segment !== parts[i]) {
      return null;
    }
  }
  return params ?? {};
}

/**
 * A path parameter as sent, percent-decoded. One that does not decode (a stray `%`, an escape of invalid
 * UTF-8) is taken as written: the route looks it up and answers as documented (VM_NOT_FOUND,
 * REPORT_NOT_FOUND when nothing has that id) rather than a 404 for a route that exists.
 */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
