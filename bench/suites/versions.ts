// Maven version order benchmarks: comparisons of realistic version pairs, and sorting 100k versions.
import type { BenchOptions, BenchRow, Suite } from '../harness.ts';
import { newBench, runTinybench } from '../harness.ts';
import { compareMavenVersions, compareParsedMavenVersions, parseMavenVersion } from '../../src/versions/maven.ts';
import { seeded } from '../../src/seed/random.ts';

// The shapes Java fleets carry: plain releases, Spring's .RELEASE, pre-releases, Guava's -jre, Jetty's dates.
const SHAPES: ((n: () => number) => string)[] = [
  (n) => `${n()}.${n()}.${n()}`,
  (n) => `${n()}.${n()}`,
  (n) => `${n()}.${n()}.${n()}.RELEASE`,
  (n) => `${n()}.${n()}.${n()}-SNAPSHOT`,
  (n) => `${n()}.${n()}-beta${n()}`,
  (n) => `${n()}.${n()}.${n()}-rc${n()}`,
  (n) => `${n()}.${n()}.${n()}.${n()}`,
  (n) => `${n()}.${n()}-jre`,
  (n) => `${n()}.${n()}.${n()}.v2022${String(n() % 12 + 1).padStart(2, '0')}${String(n() % 28 + 1).padStart(2, '0')}`,
  (n) => `${n()}.${n()}.${n()}-M${n()}`,
];

function distinctVersions(count: number, rnd: () => number): string[] {
  const n = (): number => Math.floor(rnd() * rnd() * 40);
  const versions = new Set<string>();
  while (versions.size < count) versions.add(SHAPES[Math.floor(rnd() * SHAPES.length)](n));
  return [...versions];
}

function sample(pool: readonly string[], count: number, rnd: () => number): string[] {
  return Array.from({ length: count }, () => pool[Math.floor(rnd() * pool.length)]);
}

const ROWS = {
  cached: 'compareMavenVersions, realistic pairs (parsed forms cached)',
  fresh: 'compareMavenVersions, never-seen versions (parse both, then compare)',
  sort: 'sort versions with compareMavenVersions',
  sortParsed: 'sort pre-parsed versions with compareParsedMavenVersions',
};

export const suite: Suite = {
  name: 'versions',
  rows: Object.values(ROWS),
  async run(options: BenchOptions): Promise<BenchRow[]> {
    const rnd = seeded(7);
    const distinct = options.quick ? 5_000 : 20_000;
    const sorted = options.quick ? 20_000 : 100_000;
    const pool = distinctVersions(distinct, rnd);
    const pairs = 10_000;
    const left = sample(pool, pairs, rnd);
    const right = sample(pool, pairs, rnd);
    const versions = sample(pool, sorted, rnd);
    const parsed = versions.map(parseMavenVersion);
    let fresh = 0;
    const k = (n: number): string => `${n / 1000}k`;

    const compare = newBench(options);
    compare.add(ROWS.cached, () => {
      for (let i = 0; i < pairs; i++) compareMavenVersions(left[i], right[i]);
    });
    compare.add(ROWS.fresh, () => {
      for (let i = 0; i < pairs; i++) {
        fresh++;
        compareMavenVersions(`${left[i]}.${fresh}`, `${right[i]}-${fresh}`);
      }
    });
    const compareRows = await runTinybench('versions', `${k(pairs)} pairs from ${k(distinct)} distinct versions`, compare, pairs, 'items/s');

    const sort = newBench(options);
    sort.add(ROWS.sort, () => {
      [...versions].sort(compareMavenVersions);
    });
    sort.add(ROWS.sortParsed, () => {
      [...parsed].sort(compareParsedMavenVersions);
    });
    const sortRows = await runTinybench('versions', `${k(sorted)} versions (${k(distinct)} distinct)`, sort, versions.length, 'items/s');

    return [...compareRows, ...sortRows];
  },
};
