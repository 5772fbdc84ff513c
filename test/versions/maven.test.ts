// Maven version order against the tables of Maven's own ComparableVersionTest (maven-artifact 3.9).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalMavenVersion, compareMavenVersions } from '../../src/versions/maven.ts';
import { MAVEN_PAIRS } from './maven-pairs.ts';

const VERSIONS_QUALIFIER = [
  '1-alpha2snapshot', '1-alpha2', '1-alpha-123', '1-beta-2', '1-beta123', '1-m2', '1-m11', '1-rc', '1-cr2',
  '1-rc123', '1-SNAPSHOT', '1', '1-sp', '1-sp2', '1-sp123', '1-abc', '1-def', '1-pom-1', '1-1-snapshot',
  '1-1', '1-2', '1-123',
];

const VERSIONS_NUMBER = [
  '2.0', '2.0.a', '2-1', '2.0.2', '2.0.123', '2.1.0', '2.1-a', '2.1b', '2.1-c', '2.1-1', '2.1.0.1', '2.2',
  '2.123', '11.a2', '11.a11', '11.b2', '11.b11', '11.m2', '11.m11', '11', '11.a', '11b', '11c', '11m',
];

const EQUAL: [string, string][] = [
  ['1', '1'], ['1', '1.0'], ['1', '1.0.0'], ['1.0', '1.0.0'], ['1', '1-0'], ['1', '1.0-0'], ['1.0', '1.0-0'],
  // no separator between number and character
  ['1a', '1-a'], ['1a', '1.0-a'], ['1a', '1.0.0-a'], ['1.0a', '1-a'], ['1.0.0a', '1-a'],
  ['1x', '1-x'], ['1x', '1.0-x'], ['1x', '1.0.0-x'], ['1.0x', '1-x'], ['1.0.0x', '1-x'],
  // aliases
  ['1ga', '1'], ['1release', '1'], ['1final', '1'], ['1cr', '1rc'],
  // a, b and m directly followed by a digit are alpha, beta and milestone
  ['1a1', '1-alpha-1'], ['1b2', '1-beta-2'], ['1m3', '1-milestone-3'],
  // case insensitive
  ['1X', '1x'], ['1A', '1a'], ['1B', '1b'], ['1M', '1m'], ['1Ga', '1'], ['1GA', '1'], ['1RELEASE', '1'],
  ['1RELeaSE', '1'], ['1Final', '1'], ['1FinaL', '1'], ['1FINAL', '1'], ['1Cr', '1Rc'], ['1cR', '1rC'],
  ['1m3', '1Milestone3'], ['1m3', '1MileStone3'], ['1m3', '1MILESTONE3'],
  ['1.0.0-alpha1', '1.0.0-ALPHA1'], ['1.a', '1.A'], ['1.é', '1.É'],
  ['1-abcdefghijklmnopqrstuvwxyz', '1-ABCDEFGHIJKLMNOPQRSTUVWXYZ'],
];

const ORDERED: [string, string][] = [
  ['1', '2'], ['1.5', '2'], ['1', '2.5'], ['1.0', '1.1'], ['1.1', '1.2'], ['1.0.0', '1.1'], ['1.0.1', '1.1'],
  ['1.1', '1.2.0'],
  ['1.0-alpha-1', '1.0'], ['1.0-alpha-1', '1.0-alpha-2'], ['1.0-alpha-1', '1.0-beta-1'],
  ['1.0-beta-1', '1.0-SNAPSHOT'], ['1.0-SNAPSHOT', '1.0'], ['1.0-alpha-1-SNAPSHOT', '1.0-alpha-1'],
  ['1.0', '1.0-1'], ['1.0-1', '1.0-2'], ['1.0.0', '1.0-1'],
  ['2.0-1', '2.0.1'], ['2.0.1-klm', '2.0.1-lmn'], ['2.0.1', '2.0.1-xyz'],
  ['2.0.1', '2.0.1-123'], ['2.0.1-xyz', '2.0.1-123'],
  // leading zeroes
  ['0.7', '2'], ['0.2', '1.0.7'],
  // letters sort before digits, lexically among themselves
  ['J', '7'], ['c', '7'], ['aardvark', 'zebra'], ['zebra', 'ζέβρα'],
  // MNG-5568: transitive
  ['6.1.0rc3', '6.1.0'], ['6.1.0rc3', '6.1H.5-beta'], ['6.1.0', '6.1H.5-beta'],
  // MNG-6572: int, long and BigInteger sized numbers
  ['20190126.230843', '1234567890.12345'], ['1234567890.12345', '123456789012345.1H.5-beta'],
  ['20190126.230843', '123456789012345.1H.5-beta'], ['123456789012345.1H.5-beta', '12345678901234567890.1H.5-beta'],
  ['1234567890.12345', '12345678901234567890.1H.5-beta'], ['20190126.230843', '12345678901234567890.1H.5-beta'],
  // MNG-6964: a "-0." qualifier is not a release
  ['1-0.alpha', '1'], ['1-0.beta', '1'], ['1-0.alpha', '1-0.beta'],
  // ComparableVersion is not transitive on contrived versions; the port keeps even that
  ['1.sp.1', '1-alpha'], ['1-alpha', '1'], ['1', '1.sp.1'],
  // Versions the fleet carries
  ['2.0-beta9', '2.0-rc1'], ['2.0-rc1', '2.0'], ['2.14.1', '2.15.0'], ['2.15.0', '2.17.1'],
  ['4.3.30.RELEASE', '5.2.20.RELEASE'], ['5.3.17', '5.3.18'], ['2.9.10.8', '2.10.0'],
];

// MNG-7644: 1.0.0.X1 < 1.0.0-X2, and 2-X == 2.0.X == 2.0.0.X, for any string X
for (const x of ['abc', 'alpha', 'a', 'beta', 'b', 'def', 'milestone', 'm', 'RC']) {
  ORDERED.push([`1.0.0.${x}1`, `1.0.0-${x}2`]);
  EQUAL.push([`2-${x}`, `2.0.${x}`], [`2-${x}`, `2.0.0.${x}`], [`2.0.${x}`, `2.0.0.${x}`]);
}

const LEADING_ZEROES = Array.from({ length: 19 }, (_, i) => `${'0'.repeat(18 - i)}1`);
const ZEROES = Array.from({ length: 19 }, (_, i) => '0'.repeat(19 - i));

function assertOrdered(low: string, high: string): void {
  assert.ok(compareMavenVersions(low, high) < 0, `expected ${low} < ${high}`);
  assert.ok(compareMavenVersions(high, low) > 0, `expected ${high} > ${low}`);
}

function assertEqual(a: string, b: string): void {
  assert.equal(compareMavenVersions(a, b), 0, `expected ${a} == ${b}`);
  assert.equal(compareMavenVersions(b, a), 0, `expected ${b} == ${a}`);
}

describe('compareMavenVersions', () => {
  for (const [name, sequence] of [['VERSIONS_QUALIFIER', VERSIONS_QUALIFIER], ['VERSIONS_NUMBER', VERSIONS_NUMBER]] as const) {
    it(`orders ${name} strictly, every pair in both directions`, () => {
      for (let i = 0; i < sequence.length; i++) {
        for (let j = i + 1; j < sequence.length; j++) assertOrdered(sequence[i], sequence[j]);
        assertEqual(sequence[i], sequence[i]);
      }
    });
  }

  it('treats the equality set as equal, both directions', () => {
    for (const [a, b] of EQUAL) assertEqual(a, b);
  });

  it('orders the comparison set, both directions', () => {
    for (const [low, high] of ORDERED) assertOrdered(low, high);
  });

  it('ignores leading zeroes whatever the length', () => {
    for (const set of [LEADING_ZEROES, ZEROES]) {
      for (const a of set) for (const b of set) assertEqual(a, b);
    }
  });

  it('sorts a shuffled sequence back into order', () => {
    const shuffled = [...VERSIONS_NUMBER].reverse();
    shuffled.push(shuffled.shift() as string);
    assert.deepEqual(shuffled.sort(compareMavenVersions), VERSIONS_NUMBER);
  });

  it(`agrees with Maven 3.9.6 on ${MAVEN_PAIRS.length} generated pairs, both directions`, () => {
    for (const [a, b, sign] of MAVEN_PAIRS) {
      assert.equal(Math.sign(compareMavenVersions(a, b)), sign, `${a} vs ${b}`);
      assert.equal(Math.sign(compareMavenVersions(b, a)), -sign || 0, `${b} vs ${a}`);
    }
  });

  it('survives a version nested a hundred thousand levels deep', () => {
    const deep = '1-'.repeat(100_000);
    assert.ok(compareMavenVersions(deep, `${deep}1`) < 0);
    assert.equal(compareMavenVersions(deep, `${deep}0`), 0);
  });
});

describe('canonicalMavenVersion', () => {
  const CANONICAL: [string, string][] = [
    ['1.0-alpha', '1-alpha'], ['1.0.0', '1'], ['1-1.foo-bar1baz-.1', '1-1.foo-bar-1-baz-0.1'], ['0.x', 'x'],
    ['0.2', '0.2'], ['1a1', '1-alpha-1'], ['1.ga.1', '1..1'], ['1.2.3-SNAPSHOT', '1.2.3-snapshot'],
  ];

  it('gives Maven\'s canonical form', () => {
    for (const [version, canonical] of CANONICAL) assert.equal(canonicalMavenVersion(version), canonical, version);
  });

  it('gives a canonical form that parses to itself (ComparableVersionTest.newComparable)', () => {
    for (const version of [...VERSIONS_QUALIFIER, ...VERSIONS_NUMBER, ...EQUAL.flat(), ...ORDERED.flat()]) {
      const canonical = canonicalMavenVersion(version);
      assert.equal(canonicalMavenVersion(canonical), canonical, version);
    }
  });
});
