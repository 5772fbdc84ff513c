// CycloneDX 1.6 SBOM export with runtime VEX: GET /public/instance/{vmId}/sbom and GET /public/sbom.
import { ApiError } from '../../errors.ts';
import { fleetSbom, vmSbom } from '../../sbom/cyclonedx.ts';
import { advisoriesByCve, selectVms, vmInventory } from '../../sbom/inventory.ts';
import { findVm } from '../../storage/vms.ts';
import type { ServiceContext } from '../service-context.ts';
import type { ApiRequest, Route } from '../types.ts';
import { vmNotFound } from './instance-body.ts';

/** The media type CycloneDX registers for its JSON format. */
const CYCLONEDX_JSON = 'application/vnd.cyclonedx+json; version=1.6';

/** `AppEnv=X` and `tags.K=V` pairs: every one must match (AppEnv is the tag of that name). */
function selection(request: ApiRequest): [string, string][] {
  const tags: [string, string][] = [];
  for (const [name, value] of request.query) {
    if (name === 'AppEnv') tags.push(['AppEnv', value]);
    else if (name.startsWith('tags.') && name.length > 5) tags.push([name.slice(5), value]);
    else throw new ApiError('BAD_PARAMETER', `unknown parameter '${name}'; parameters: AppEnv, tags.<key>`, [{ parameter: name }]);
  }
  return tags;
}

function cyclonedx(document: unknown) {
  return { status: 200, contentType: CYCLONEDX_JSON, raw: Buffer.from(JSON.stringify(document)) };
}

export function sbomRoutes(context: ServiceContext): Route[] {
  const { store, dict, config } = context;
  const read = { scope: 'read', needsReady: true } as const;
  return [
    {
      method: 'GET',
      pattern: '/public/instance/:vmId/sbom',
      ...read,
      handler: (request) => {
        const record = findVm(store, request.params.vmId);
        if (record === undefined) throw vmNotFound(request.params.vmId);
        const now = context.clock();
        return cyclonedx(vmSbom(vmInventory(store, dict, record, now, config.offlineAfterMs), advisoriesByCve(store), now));
      },
    },
    {
      method: 'GET',
      pattern: '/public/sbom',
      ...read,
      handler: (request) => {
        const tags = selection(request);
        const now = context.clock();
        const vms = selectVms(store, dict, tags).map((record) => vmInventory(store, dict, record, now, config.offlineAfterMs));
        return cyclonedx(fleetSbom(vms, { tags }, advisoriesByCve(store), now));
      },
    },
  ];
}
