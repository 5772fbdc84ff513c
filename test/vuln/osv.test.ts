// OSV record validation: what a valid record becomes, and the precise message for each way a record is wrong.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateOsvRecord } from '../../src/vuln/osv.ts';
import type { OsvRecord } from '../../src/vuln/osv.ts';

function record(overrides: Record<string, unknown> = {}): OsvRecord & Record<string, unknown> {
  return {
    id: 'GHSA-aaaa-bbbb-cccc',
    modified: '2024-01-02T03:04:05Z',
    aliases: ['CVE-2024-0001'],
    summary: 'A flaw',
    severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' }],
    affected: [
      {
        package: { ecosystem: 'Maven', name: 'org.example:lib' },
        ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '1.2.3' }] }],
        versions: ['1.0'],
      },
    ],
    ...overrides,
  };
}

function valid(json: unknown) {
  const result = validateOsvRecord(json);
  assert.ok(result.ok, result.ok ? '' : result.error);
  return result.vulnerability;
}

describe('validateOsvRecord', () => {
  it('turns a record into a Vulnerability', () => {
    assert.deepEqual(valid(record()), {
      id: 'GHSA-aaaa-bbbb-cccc',
      cveId: 'CVE-2024-0001',
      aliases: ['CVE-2024-0001'],
      summary: 'A flaw',
      modified: '2024-01-02T03:04:05Z',
      score: 9.8,
      vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
      packages: [
        {
          groupId: 'org.example',
          artifactId: 'lib',
          ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '1.2.3' }] }],
          versions: ['1.0'],
        },
      ],
    });
  });

  const CVE_IDS: [string, string[], string][] = [
    ['GHSA-aaaa-bbbb-cccc', ['CVE-2024-0001'], 'CVE-2024-0001'],
    ['GHSA-aaaa-bbbb-cccc', ['BIT-2024-1', 'CVE-2024-0002', 'CVE-2024-0003'], 'CVE-2024-0002'],
    ['CVE-2024-0004', ['GHSA-aaaa-bbbb-cccc', 'CVE-2024-0005'], 'CVE-2024-0004'],
    ['GHSA-aaaa-bbbb-cccc', [], 'GHSA-aaaa-bbbb-cccc'],
  ];
  for (const [id, aliases, cveId] of CVE_IDS) {
    it(`chooses cveId ${cveId} for ${id} aliased ${aliases.join(',') || 'nothing'}`, () => {
      assert.equal(valid(record({ id, aliases })).cveId, cveId);
    });
  }

  it('keeps only Maven packages, including Maven with a repository URL, and drops GIT ranges', () => {
    const v = valid(record({
      affected: [
        { package: { ecosystem: 'npm', name: 'left-pad' }, versions: ['1.0.0'] },
        { package: { ecosystem: 'Maven:https://maven.google.com', name: 'com.google:lib' }, versions: ['2.0'] },
        {
          package: { ecosystem: 'Maven', name: 'org.example:lib' },
          ranges: [
            { type: 'GIT', repo: 'https://example.org/lib.git', events: [{ introduced: 'abc123' }] },
            { type: 'SEMVER', events: [{ introduced: '1.0.0' }] },
          ],
        },
        { ranges: [{ type: 'GIT', repo: 'https://example.org/x.git', events: [{ introduced: '0' }] }] },
      ],
    }));
    assert.deepEqual(v.packages.map((p) => `${p.groupId}:${p.artifactId}`), ['com.google:lib', 'org.example:lib']);
    assert.deepEqual(v.packages[1].ranges, [{ type: 'SEMVER', events: [{ introduced: '1.0.0' }] }]);
  });

  it('scores from v2 when there is no v3, from a package when the top level has none, else null', () => {
    assert.equal(valid(record({ severity: [{ type: 'CVSS_V2', score: 'AV:N/AC:L/Au:N/C:P/I:P/A:P' }] })).score, 7.5);
    const perPackage = record({ severity: undefined });
    perPackage.affected![0].severity = [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:N/A:H' }];
    assert.equal(valid(perPackage).score, 5.9);
    assert.deepEqual([valid(record({ severity: [] })).score, valid(record({ severity: [] })).vector], [null, null]);
  });

  it('falls back to the first line of details for a missing summary', () => {
    assert.equal(valid(record({ summary: undefined, details: 'First line.\nMore.' })).summary, 'First line.');
    assert.equal(valid(record({ summary: undefined })).summary, '');
  });

  it('gives a withdrawn record no packages, so that replacing with it stops its matches', () => {
    assert.deepEqual(valid(record({ withdrawn: '2024-02-01T00:00:00Z' })).packages, []);
  });

  const INVALID: [string, unknown, string][] = [
    ['not an object', [1, 2], 'record: expected a JSON object, got [1,2]'],
    ['no id', record({ id: undefined }), 'id: expected a non-empty string, got nothing'],
    ['bad modified', record({ modified: 'yesterday' }), 'GHSA-aaaa-bbbb-cccc: modified: expected an RFC 3339 timestamp, got "yesterday"'],
    ['aliases not strings', record({ aliases: ['CVE-1', 2] }), 'GHSA-aaaa-bbbb-cccc: aliases[1]: expected a string, got 2'],
    ['severity without score', record({ severity: [{ type: 'CVSS_V3' }] }), 'GHSA-aaaa-bbbb-cccc: severity[0]: expected an object with string type and score, got {"type":"CVSS_V3"}'],
    ['affected not an array', record({ affected: {} }), 'GHSA-aaaa-bbbb-cccc: affected: expected an array, got {}'],
    [
      'package without name',
      record({ affected: [{ package: { ecosystem: 'Maven' } }] }),
      'GHSA-aaaa-bbbb-cccc: affected[0].package: expected an object with string ecosystem and name, got {"ecosystem":"Maven"}',
    ],
    [
      'Maven name without groupId',
      record({ affected: [{ package: { ecosystem: 'Maven', name: 'lib' } }] }),
      'GHSA-aaaa-bbbb-cccc: affected[0].package.name: expected groupId:artifactId, got "lib"',
    ],
    [
      'unknown range type',
      record({ affected: [{ package: { ecosystem: 'Maven', name: 'g:a' }, ranges: [{ type: 'RPM', events: [] }] }] }),
      'GHSA-aaaa-bbbb-cccc: affected[0].ranges[0].type: expected ECOSYSTEM, SEMVER or GIT, got "RPM"',
    ],
    [
      'event with two keys',
      record({ affected: [{ package: { ecosystem: 'Maven', name: 'g:a' }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '1', fixed: '2' }] }] }] }),
      'GHSA-aaaa-bbbb-cccc: affected[0].ranges[0].events[0]: expected exactly one of introduced, fixed, last_affected, limit, got {"introduced":"1","fixed":"2"}',
    ],
    [
      'event with an empty version',
      record({ affected: [{ package: { ecosystem: 'Maven', name: 'g:a' }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '' }] }] }] }),
      'GHSA-aaaa-bbbb-cccc: affected[0].ranges[0].events[0].introduced: expected a non-empty version string, got ""',
    ],
    [
      'range without introduced',
      record({ affected: [{ package: { ecosystem: 'Maven', name: 'g:a' }, ranges: [{ type: 'ECOSYSTEM', events: [{ fixed: '2' }] }] }] }),
      'GHSA-aaaa-bbbb-cccc: affected[0].ranges[0].events: expected at least one introduced event, got [{"fixed":"2"}]',
    ],
    [
      'versions not strings',
      record({ affected: [{ package: { ecosystem: 'Maven', name: 'g:a' }, versions: [1.2] }] }),
      'GHSA-aaaa-bbbb-cccc: affected[0].versions[0]: expected a string, got 1.2',
    ],
  ];
  for (const [what, json, error] of INVALID) {
    it(`rejects ${what}`, () => assert.deepEqual(validateOsvRecord(json), { ok: false, error }));
  }
});
