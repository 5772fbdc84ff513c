// The VM instance explorer under /public/instance (interface §4.2, decisions §5).
import { ApiError } from '../../errors.ts';
import { validateTagKey, validateTagValue } from '../../ingest/tag-rules.ts';
import { MissingTagError, vmAnnotations, vmTags } from '../../storage/vms.ts';
import type { TagEdit, TagRecord } from '../../storage/vms.ts';
import { readJson } from '../body.ts';
import type { ServiceContext } from '../service-context.ts';
import { vmNotFound } from './instance-body.ts';
import type { Route } from '../types.ts';

/** Parses tag records from a body: one record, an array of records, or (when allowed) a {key: value} map. */
function parseTagRecords(body: unknown, allowMap: boolean): TagRecord[] {
  let records: unknown[];
  if (Array.isArray(body)) records = body;
  else if (typeof body === 'object' && body !== null && 'key' in body) records = [body];
  else if (allowMap && typeof body === 'object' && body !== null) records = Object.entries(body).map(([key, value]) => ({ key, value }));
  else throw new ApiError('BAD_TAGS', allowMap ? 'body must be an array of {"key","value"} records or a {key: value} map' : 'body must be a {"key","value"} record or an array of them');
  const details: { index: number; message: string }[] = [];
  const parsed: TagRecord[] = [];
  records.forEach((record, index) => {
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      details.push({ index, message: 'a tag must be an object {"key","value"}' });
      return;
    }
    const { key, value, ...rest } = record as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length > 0) details.push({ index, message: `unknown field '${extra[0]}'` });
    else if (typeof key !== 'string') details.push({ index, message: "'key' must be a string" });
    else if (typeof value !== 'string') details.push({ index, message: "'value' must be a string" });
    else {
      const problem = validateTagKey(key) ?? validateTagValue(value);
      if (problem !== null) details.push({ index, message: `tag '${key}': ${problem}` });
      else parsed.push({ key, value });
    }
  });
  if (details.length > 0) throw new ApiError('BAD_TAGS', `${details.length} invalid tag(s); nothing was changed`, details);
  return parsed;
}

function throwNotFound(vmId: string): never {
  throw vmNotFound(vmId);
}

export function explorerRoutes(context: ServiceContext): Route[] {
  const { store, dict } = context;
  const read = { scope: 'read', needsReady: true } as const;
  const write = { scope: 'write', needsReady: true } as const;
  const edit = async (change: TagEdit): Promise<TagRecord[]> => {
    try {
      return (await context.writes.tags(change)) ?? throwNotFound(change.vmId);
    } catch (error) {
      if (error instanceof MissingTagError) throw new ApiError('TAG_NOT_FOUND', error.message);
      throw error;
    }
  };
  return [
    {
      method: 'GET',
      pattern: '/public/instance/:vmId',
      ...read,
      handler: (request) => ({ status: 200, contentType: 'application/json', raw: context.instances.get(store, dict, request.params.vmId, context.clock(), context.config.offlineAfterMs) }),
    },
    {
      method: 'GET',
      pattern: '/public/instance/:vmId/annotations',
      ...read,
      handler: (request) => ({ status: 200, body: vmAnnotations(store, request.params.vmId) ?? throwNotFound(request.params.vmId) }),
    },
    {
      method: 'GET',
      pattern: '/public/instance/:vmId/tags',
      ...read,
      handler: (request) => ({ status: 200, body: vmTags(store, dict, request.params.vmId) ?? throwNotFound(request.params.vmId) }),
    },
    {
      method: 'POST',
      pattern: '/public/instance/:vmId/tags',
      ...write,
      handler: async (request) => ({ status: 200, body: await edit({ vmId: request.params.vmId, op: 'merge', records: parseTagRecords(readJson(request), false) }) }),
    },
    {
      method: 'PUT',
      pattern: '/public/instance/:vmId/tags',
      ...write,
      handler: async (request) => ({ status: 200, body: await edit({ vmId: request.params.vmId, op: 'replace', records: parseTagRecords(readJson(request), true) }) }),
    },
    {
      method: 'DELETE',
      pattern: '/public/instance/:vmId/tags',
      ...write,
      handler: async (request) => {
        await edit({ vmId: request.params.vmId, op: 'replace', records: [] });
        return { status: 204 };
      },
    },
    {
      method: 'DELETE',
      pattern: '/public/instance/:vmId/tags/:tag',
      ...write,
      handler: async (request) => {
        await edit({ vmId: request.params.vmId, op: 'remove', key: request.params.tag });
        return { status: 204 };
      },
    },
  ];
}
