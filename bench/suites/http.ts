// HTTP read paths of a real service on a seeded fleet: GET /opthub-health and GET /public/instance/{vmId}, each beside node:http.
import { describeFleet, fleetSize, sampleVmIds, seededDataDir } from '../fleet.ts';
import { wanted } from '../harness.ts';
import type { BenchOptions, BenchRow, Suite } from '../harness.ts';
import { loadPlan } from '../load.ts';
import { SERVICE_WORKERS, startJvmlens } from '../service.ts';
import { baselineRowName, measureVersusBaseline } from '../versus-baseline.ts';

const NAME = 'http';
const HEALTH = 'GET /opthub-health';
const INSTANCE = 'GET /public/instance/{vmId}';
/** Instance requests rotate over this many VMs of the fleet, so one cached record does not stand for all. */
const SAMPLE_VMS = 100;

function wants(options: BenchOptions, row: string): boolean {
  return wanted(options, NAME, row) || wanted(options, NAME, baselineRowName(row));
}

export const suite: Suite = {
  name: NAME,
  rows: [HEALTH, baselineRowName(HEALTH), INSTANCE, baselineRowName(INSTANCE)],
  async run(options) {
    const size = fleetSize(options);
    const sizeText = describeFleet(size);
    const plan = loadPlan(options);
    const service = await startJvmlens({ dataDir: await seededDataDir(size), workers: SERVICE_WORKERS });
    const rows: BenchRow[] = [];
    try {
      if (wants(options, HEALTH)) {
        rows.push(...(await measureVersusBaseline({
          suite: NAME, name: HEALTH, size: sizeText, plan,
          jvmlens: { origin: service.gatewayUrl, pid: service.pid },
          paths: ['/opthub-health'],
          headers: {},
        })));
      }
      if (wants(options, INSTANCE)) {
        const vmIds = sampleVmIds(size, SAMPLE_VMS);
        rows.push(...(await measureVersusBaseline({
          suite: NAME, name: INSTANCE, size: `${sizeText}, ${vmIds.length} VMs in turn`, plan,
          jvmlens: { origin: service.apiUrl, pid: service.pid },
          paths: vmIds.map((vmId) => `/public/instance/${encodeURIComponent(vmId)}`),
          headers: { 'x-api-key': service.apiKey },
        })));
      }
    } finally {
      await service.stop();
    }
    return rows;
  },
};
