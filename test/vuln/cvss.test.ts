// CVSS base scores against published scores (NVD and GitHub advisories), and the choice among severities.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cvss2BaseScore, cvss3BaseScore, scoreFromSeverity } from '../../src/vuln/cvss.ts';

const V3: [string, number, string][] = [
  ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H', 10.0, 'CVE-2021-44228 Log4Shell'],
  ['CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:C/C:H/I:H/A:H', 9.0, 'CVE-2021-45046'],
  ['CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:N/A:H', 5.9, 'CVE-2021-45105'],
  ['CVSS:3.1/AV:N/AC:H/PR:H/UI:N/S:U/C:H/I:H/A:H', 6.6, 'CVE-2021-44832'],
  ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 9.8, 'CVE-2022-22965 Spring4Shell'],
  ['CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H', 8.8, 'PR:L network'],
  ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H', 7.5, 'network denial of service'],
  ['CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:N/I:N/A:H', 6.5, 'CVE-2022-22950'],
  ['CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N', 6.1, 'reflected XSS'],
  ['CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H', 7.8, 'local privilege escalation'],
  ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N', 5.3, 'information disclosure'],
  ['CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H', 8.1, 'CVE-2017-9805 Struts REST'],
  ['CVSS:3.1/AV:P/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N', 1.6, 'lowest non-zero'],
  ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N', 0.0, 'no impact'],
  ['CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 9.8, 'CVE-2015-7501 commons-collections (v3.0)'],
  ['CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H', 10.0, 'CVE-2017-5638 Struts (v3.0)'],
  ['CVSS:3.0/AV:N/AC:L/PR:N/UI:R/S:U/C:N/I:H/A:N', 6.5, 'v3.0 user interaction'],
  ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/E:H/RL:O/RC:C', 9.8, 'temporal metrics do not change the base'],
];

const V2: [string, number, string][] = [
  ['AV:N/AC:L/Au:N/C:P/I:P/A:P', 7.5, 'CVE-2015-4852 commons-collections'],
  ['AV:N/AC:M/Au:N/C:C/I:C/A:C', 9.3, 'CVE-2021-44228 (NVD v2)'],
  ['AV:N/AC:L/Au:N/C:C/I:C/A:C', 10.0, 'CVE-2017-5638 (NVD v2)'],
  ['AV:N/AC:M/Au:N/C:P/I:P/A:P', 6.8, 'medium access complexity'],
  ['AV:N/AC:M/Au:N/C:N/I:P/A:N', 4.3, 'XSS'],
  ['AV:N/AC:L/Au:N/C:N/I:N/A:P', 5.0, 'denial of service'],
  ['AV:L/AC:L/Au:N/C:C/I:C/A:C', 7.2, 'local'],
  ['AV:N/AC:L/Au:S/C:P/I:P/A:P', 6.5, 'authenticated'],
  ['(AV:N/AC:L/Au:N/C:P/I:P/A:P)', 7.5, 'NVD parenthesised form'],
  ['AV:N/AC:L/Au:N/C:N/I:N/A:N', 0.0, 'no impact'],
];

const INVALID = [
  '', 'CVSS:3.1', 'CVSS:3.2/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H',
  'CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 'CVSS:3.1/AV:N/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
  'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/ZZ:1', 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/',
  'AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
];

describe('cvss3BaseScore', () => {
  for (const [vector, score, what] of V3) {
    it(`${what}: ${vector} = ${score.toFixed(1)}`, () => assert.equal(cvss3BaseScore(vector), score));
  }
  it('rejects invalid vectors with null', () => {
    for (const vector of INVALID) assert.equal(cvss3BaseScore(vector), null, vector);
  });
});

describe('cvss2BaseScore', () => {
  for (const [vector, score, what] of V2) {
    it(`${what}: ${vector} = ${score.toFixed(1)}`, () => assert.equal(cvss2BaseScore(vector), score));
  }
  it('rejects invalid vectors with null', () => {
    for (const vector of ['', 'AV:N/AC:L/Au:N/C:P/I:P', 'AV:N/AC:L/Au:N/C:P/I:P/A:X', 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H']) {
      assert.equal(cvss2BaseScore(vector), null, vector);
    }
  });
});

describe('scoreFromSeverity', () => {
  const v2 = { type: 'CVSS_V2', score: 'AV:N/AC:M/Au:N/C:C/I:C/A:C' };
  const v3 = { type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H' };
  const v4 = { type: 'CVSS_V4', score: 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:H/SI:H/SA:H' };
  const cases: [string, { type: string; score: string }[], number | null, string | null][] = [
    ['prefers v3 over an earlier v2', [v2, v3], 10.0, v3.score],
    ['falls back to v2', [v4, v2], 9.3, v2.score],
    ['skips an invalid v3 vector', [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N' }, v2], 9.3, v2.score],
    ['has no score without v2 or v3', [v4, { type: 'Ubuntu', score: 'high' }], null, null],
    ['has no score without severity', [], null, null],
  ];
  for (const [what, severity, score, vector] of cases) {
    it(what, () => assert.deepEqual(scoreFromSeverity(severity), { score, vector }));
  }
});
