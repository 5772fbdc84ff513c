// The curated OSV set: every record validates and scores, and the versions the fleet runs match as published.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadCuratedVulnerabilities } from '../../src/vuln/curated.ts';
import { VulnerabilityIndex } from '../../src/vuln/vulnerability-index.ts';

const curated = loadCuratedVulnerabilities();
const index = new VulnerabilityIndex(curated);

function cves(groupId: string, componentName: string, componentVersion: string): string[] {
  return index.match({ groupId, componentName, componentVersion }).map((v) => v.cveId);
}

describe('curated OSV set', () => {
  it('holds at least 20 records, each with a CVE, a score, a Maven package and its source', () => {
    assert.ok(curated.length >= 20, `${curated.length} records`);
    for (const v of curated) {
      assert.match(v.cveId, /^CVE-\d{4}-\d+$/, v.id);
      assert.equal(typeof v.score, 'number', `${v.id} has a score`);
      assert.ok(v.vector?.startsWith('CVSS:3.'), `${v.id} has a v3 vector`);
      assert.ok(v.packages.length > 0, `${v.id} has Maven packages`);
    }
    assert.equal(new Set(curated.map((v) => v.id)).size, curated.length, 'ids are unique');
  });

  const CASES: [string, string, string, string[], string[]][] = [
    // groupId, artifactId, version, CVEs it has, CVEs it must not have
    ['org.apache.logging.log4j', 'log4j-core', '2.14.1', ['CVE-2021-44228', 'CVE-2021-45046', 'CVE-2021-45105', 'CVE-2021-44832'], []],
    ['org.apache.logging.log4j', 'log4j-core', '2.0-rc1', ['CVE-2021-44228'], []],
    ['org.apache.logging.log4j', 'log4j-core', '2.15.0', ['CVE-2021-45046', 'CVE-2021-45105', 'CVE-2021-44832'], ['CVE-2021-44228']],
    ['org.apache.logging.log4j', 'log4j-core', '2.16.0', ['CVE-2021-45105', 'CVE-2021-44832'], ['CVE-2021-45046']],
    ['org.apache.logging.log4j', 'log4j-core', '2.17.0', ['CVE-2021-44832'], ['CVE-2021-45105']],
    ['org.apache.logging.log4j', 'log4j-core', '2.17.1', [], ['CVE-2021-44228', 'CVE-2021-45046', 'CVE-2021-45105', 'CVE-2021-44832']],
    ['org.apache.logging.log4j', 'log4j-core', '2.12.4', [], ['CVE-2021-44228', 'CVE-2021-44832']],
    // Debian's liblog4j2-java versions
    ['org.apache.logging.log4j', 'log4j-core', '2.7', ['CVE-2021-44228', 'CVE-2021-44832'], []],
    ['org.apache.logging.log4j', 'log4j-core', '2.11.1', ['CVE-2021-44228'], []],
    ['org.apache.logging.log4j', 'log4j-core', '2.19.0', [], ['CVE-2021-44228', 'CVE-2021-44832']],
    // Debian's libspring-java ships spring-core 4.3.30
    ['org.springframework', 'spring-core', '4.3.30', ['CVE-2022-22950', 'CVE-2022-22968'], []],
    ['org.springframework', 'spring-core', '4.3.30.RELEASE', ['CVE-2022-22950', 'CVE-2022-22968'], []],
    ['org.springframework', 'spring-beans', '4.3.30', ['CVE-2022-22965'], []],
    ['org.springframework', 'spring-beans', '5.3.18', [], ['CVE-2022-22965']],
    ['org.springframework', 'spring-expression', '5.3.20', ['CVE-2023-20861'], ['CVE-2022-22950']],
    ['org.apache.commons', 'commons-text', '1.9', ['CVE-2022-42889'], []],
    ['org.apache.commons', 'commons-text', '1.10.0', [], ['CVE-2022-42889']],
    ['org.yaml', 'snakeyaml', '1.33', ['CVE-2022-1471'], []],
    ['org.yaml', 'snakeyaml', '2.0', [], ['CVE-2022-1471']],
    ['commons-collections', 'commons-collections', '3.2.1', ['CVE-2015-7501'], []],
    ['org.apache.struts', 'struts2-core', '2.3.31', ['CVE-2017-5638'], []],
    ['org.apache.struts', 'struts2-core', '2.5.10.1', [], ['CVE-2017-5638']],
    ['com.fasterxml.jackson.core', 'jackson-databind', '2.13.1', ['CVE-2020-36518', 'CVE-2022-42003'], ['CVE-2017-7525']],
    ['com.fasterxml.jackson.core', 'jackson-databind', '2.8.8', ['CVE-2017-7525', 'CVE-2020-36518', 'CVE-2022-42003'], []],
    ['log4j', 'log4j', '1.2.17', ['CVE-2019-17571', 'CVE-2021-4104'], []],
  ];

  for (const [groupId, artifactId, version, has, hasNot] of CASES) {
    it(`${groupId}:${artifactId} ${version}`, () => {
      const found = cves(groupId, artifactId, version);
      for (const cve of has) assert.ok(found.includes(cve), `${version} should have ${cve}, found ${found.join(', ')}`);
      for (const cve of hasNot) assert.ok(!found.includes(cve), `${version} should not have ${cve}`);
    });
  }

  it('scores Log4Shell 10.0 and Spring4Shell 9.8', () => {
    assert.equal(curated.find((v) => v.cveId === 'CVE-2021-44228')?.score, 10.0);
    assert.equal(curated.find((v) => v.cveId === 'CVE-2022-22965')?.score, 9.8);
  });
});
