// Vulnerability benchmarks: matching a fleet's components (100k), OSV validation (import), index build.
import type { BenchOptions, BenchRow, Suite } from '../harness.ts';
import { newBench, runTinybench } from '../harness.ts';
import { loadCuratedVulnerabilities } from '../../src/vuln/curated.ts';
import { validateOsvRecord } from '../../src/vuln/osv.ts';
import type { Vulnerability } from '../../src/vuln/osv.ts';
import { VulnerabilityIndex } from '../../src/vuln/vulnerability-index.ts';
import type { ComponentRef } from '../../src/vuln/vulnerability-index.ts';
import { seeded } from '../../src/seed/random.ts';

const SYNTHETIC_ARTIFACTS = 3_000;

/** OSV records shaped like the GitHub Maven export: a few packages, one range per release line. */
function syntheticRecords(count: number, rnd: () => number): unknown[] {
  const int = (n: number): number => Math.floor(rnd() * n);
  return Array.from({ length: count }, (_, i) => {
    const affected = Array.from({ length: 1 + int(3) }, () => {
      const artifact = int(SYNTHETIC_ARTIFACTS);
      const major = 1 + int(5);
      const minor = int(20);
      return {
        package: { ecosystem: 'Maven', name: `org.synthetic${artifact % 40}:lib-${artifact}` },
        ranges: [
          { type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: `${major}.${minor}.${int(10)}` }] },
          { type: 'ECOSYSTEM', events: [{ introduced: `${major + 1}.0.0` }, { fixed: `${major + 1}.${minor}.${int(10)}` }] },
        ],
        versions: rnd() < 0.1 ? [`${major}.${minor}.${int(10)}-custom`] : undefined,
      };
    });
    return {
      id: `GHSA-syn-${i}`,
      modified: '2024-01-01T00:00:00Z',
      aliases: [`CVE-2099-${10000 + i}`],
      summary: `Synthetic vulnerability ${i}`,
      severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' }],
      affected,
    };
  });
}

/** A fleet's components: a third from the curated set's artifacts, the rest synthetic or unknown to the index. */
function components(count: number, curated: Vulnerability[], rnd: () => number): ComponentRef[] {
  const int = (n: number): number => Math.floor(rnd() * n);
  const known = curated.flatMap((v) => v.packages);
  return Array.from({ length: count }, () => {
    const roll = rnd();
    const version = `${1 + int(5)}.${int(20)}.${int(10)}`;
    if (roll < 0.33) {
      const pkg = known[int(known.length)];
      return { componentName: pkg.artifactId, componentVersion: version, groupId: pkg.groupId };
    }
    if (roll < 0.66) {
      const artifact = int(SYNTHETIC_ARTIFACTS);
      return { componentName: `lib-${artifact}`, componentVersion: version, groupId: rnd() < 0.5 ? `org.synthetic${artifact % 40}` : undefined };
    }
    if (roll < 0.7) return { componentName: `lib-${int(SYNTHETIC_ARTIFACTS)}`, componentVersion: 'UNKNOWN' };
    return { componentName: `app-module-${int(50_000)}`, componentVersion: version };
  });
}

const ROWS = {
  match: 'VulnerabilityIndex.match over a fleet of components',
  validate: 'validateOsvRecord (import validation)',
  build: 'VulnerabilityIndex build',
};

export const suite: Suite = {
  name: 'vuln',
  rows: Object.values(ROWS),
  async run(options: BenchOptions): Promise<BenchRow[]> {
    const rnd = seeded(11);
    const syntheticCount = options.quick ? 2_000 : 10_000;
    const componentCount = options.quick ? 20_000 : 100_000;
    const curated = loadCuratedVulnerabilities();
    const json = syntheticRecords(syntheticCount, rnd);
    const synthetic = json.map((record) => {
      const result = validateOsvRecord(record);
      if (!result.ok) throw new Error(result.error);
      return result.vulnerability;
    });
    const all = [...curated, ...synthetic];
    const fleet = components(componentCount, curated, rnd);
    const index = new VulnerabilityIndex(all);
    const records = `${curated.length} curated + ${synthetic.length / 1000}k synthetic OSV records`;

    const match = newBench(options);
    match.add(ROWS.match, () => {
      for (const component of fleet) index.match(component);
    });
    const matchRows = await runTinybench('vuln', `${componentCount / 1000}k components x ${records}`, match, fleet.length, 'items/s');

    const validate = newBench(options);
    validate.add(ROWS.validate, () => {
      for (const record of json) validateOsvRecord(record);
    });
    const validateRows = await runTinybench('vuln', `${synthetic.length / 1000}k synthetic OSV records`, validate, json.length, 'items/s');

    const build = newBench(options);
    build.add(ROWS.build, () => {
      new VulnerabilityIndex(all);
    });
    const buildRows = await runTinybench('vuln', records, build, all.length, 'items/s');

    return [...matchRows, ...validateRows, ...buildRows];
  },
};
