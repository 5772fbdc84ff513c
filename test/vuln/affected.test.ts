// OSV evaluation under Maven order: introduced/fixed, last_affected, limit, versions lists, several ranges.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isVersionAffected } from '../../src/vuln/affected.ts';
import type { AffectedRange, MavenPackage, OsvEvent } from '../../src/vuln/osv.ts';

function pkg(ranges: OsvEvent[][], versions: string[] = []): MavenPackage {
  const affected: AffectedRange[] = ranges.map((events) => ({ type: 'ECOSYSTEM', events }));
  return { groupId: 'org.example', artifactId: 'lib', ranges: affected, versions };
}

interface Case {
  what: string;
  pkg: MavenPackage;
  affected: string[];
  unaffected: string[];
}

const CASES: Case[] = [
  {
    what: 'introduced/fixed: the fix is exclusive',
    pkg: pkg([[{ introduced: '2.0' }, { fixed: '2.15.0' }]]),
    affected: ['2.0', '2.0.0', '2.1', '2.14.1', '2.15.0-rc1', '2.15.0-SNAPSHOT'],
    unaffected: ['1.2.17', '2.0-beta9', '2.15.0', '2.15', '2.15.0.0', '2.17.1', '3.0'],
  },
  {
    what: 'pre-releases inside [2.0-beta9, 2.15.0)',
    pkg: pkg([[{ introduced: '2.0-beta9' }, { fixed: '2.15.0' }]]),
    affected: ['2.0-beta9', '2.0-rc1', '2.0-rc2', '2.0', '2.0.1', '2.14.1'],
    unaffected: ['2.0-beta8', '2.0-alpha1', '2.0-beta1', '1.2.17', '2.15.0', '2.16.0'],
  },
  {
    what: 'introduced "0" sorts before every version, even "0-alpha"',
    pkg: pkg([[{ introduced: '0' }, { fixed: '1.33' }]]),
    affected: ['0', '0-alpha', '0.1', '1.0', '1.32', '1.33-rc1'],
    unaffected: ['1.33', '2.0'],
  },
  {
    what: 'introduced only: every later version',
    pkg: pkg([[{ introduced: '3.1' }]]),
    affected: ['3.1', '3.2.2', '99'],
    unaffected: ['3.0', '3.1-SNAPSHOT'],
  },
  {
    what: 'last_affected is inclusive',
    pkg: pkg([[{ introduced: '0' }, { last_affected: '2.1.214' }]]),
    affected: ['1.0', '2.1.214', '2.1.214.0', '2.1.214-rc1'],
    unaffected: ['2.1.215', '2.2', '2.1.214.1', '2.1.214-sp'],
  },
  {
    what: 'limit caps the range (exclusive)',
    pkg: pkg([[{ introduced: '1.0' }, { limit: '1.5' }]]),
    affected: ['1.0', '1.4.9'],
    unaffected: ['0.9', '1.5', '2.0'],
  },
  {
    what: 'limit "*" is no cap',
    pkg: pkg([[{ introduced: '1.0' }, { limit: '*' }]]),
    affected: ['1.0', '100'],
    unaffected: ['0.9'],
  },
  {
    what: 'several limits: below any of them',
    pkg: pkg([[{ introduced: '1.0' }, { limit: '1.5' }, { limit: '3.0' }]]),
    affected: ['1.0', '2.9'],
    unaffected: ['3.0', '0.1'],
  },
  {
    what: 'versions only: exact strings',
    pkg: pkg([], ['1.2.3', '1.2.4-jboss-1']),
    affected: ['1.2.3', '1.2.4-jboss-1'],
    unaffected: ['1.2.3.0', '1.2.2', '1.2.4'],
  },
  {
    what: 'versions and a range: either',
    pkg: pkg([[{ introduced: '2.0' }, { fixed: '2.1' }]], ['1.9.9']),
    affected: ['1.9.9', '2.0.5'],
    unaffected: ['1.9.8', '2.1'],
  },
  {
    what: 'several ranges, as GHSA writes one per release line',
    pkg: pkg([
      [{ introduced: '0' }, { fixed: '5.2.20.RELEASE' }],
      [{ introduced: '5.3.0' }, { fixed: '5.3.18' }],
    ]),
    affected: ['4.3.30', '4.3.30.RELEASE', '5.2.19.RELEASE', '5.3.0', '5.3.17'],
    unaffected: ['5.2.20.RELEASE', '5.2.21', '5.3.18', '6.0.0'],
  },
  {
    what: 'several introduced/fixed pairs in one range, events unsorted',
    pkg: pkg([[{ introduced: '3.0.0' }, { fixed: '3.2.5' }, { fixed: '1.0.2' }, { introduced: '1.0.0' }]]),
    affected: ['1.0.0', '1.0.1', '3.0.0', '3.2.4'],
    unaffected: ['0.9', '1.0.2', '2.0', '3.2.5'],
  },
];

describe('isVersionAffected', () => {
  for (const { what, pkg: p, affected, unaffected } of CASES) {
    it(what, () => {
      for (const version of affected) assert.equal(isVersionAffected(p, version), true, `${version} should be affected`);
      for (const version of unaffected) assert.equal(isVersionAffected(p, version), false, `${version} should not be affected`);
    });
  }

  it('never matches through a range without an event it can evaluate', () => {
    const empty: MavenPackage = { groupId: 'g', artifactId: 'a', ranges: [{ type: 'ECOSYSTEM', events: [{ limit: '2.0' }] }], versions: [] };
    assert.equal(isVersionAffected(empty, '1.0'), false);
  });
});
