// A report whose coordinator is gone is claimed through the log by the lowest live node, once per round
// until the claim is applied; the nodes apply the first copy of a write's id the log holds and skip the
// others (applied-ids.ts). So the id must repeat while one takeover is asked again, and change once a claim
// is applied: a report taken over, taken back and taken over again within two minutes had its third claim
// dropped (its id was the first's).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { claimedBy, claimId } from '../../src/cluster/reports.ts';
import type { ReportMeta } from '../../src/engine/reports/report-types.ts';

const created = {
  reportId: '0b5e1c1a-0000-4000-8000-000000000001', family: 'jvmInventory', state: 'PROCESSING', userId: 'u', reportName: null, params: {},
  request: {}, requestTime: 1, startTime: null, finishTime: null, totalCount: 0, totalPages: 0, summary: null, coordinator: 'n1',
} as unknown as ReportMeta;

test('each takeover of a report has a claim id of its own; asking again for the same takeover repeats it', () => {
  assert.equal(claimId(created), claimId({ ...created }), 'the same takeover asked again, by this node or another');
  const byN2 = claimedBy(created, 'n2');
  const backToN1 = claimedBy(byN2, 'n1');
  const byN2Again = claimedBy(backToN1, 'n2');
  assert.deepEqual([byN2, backToN1, byN2Again].map((meta) => meta.coordinator), ['n2', 'n1', 'n2']);
  const ids = [created, byN2, backToN1, byN2Again].map(claimId);
  assert.equal(new Set(ids).size, 4, `n1 → n2 → n1 → n2: ${ids.join(', ')}`);
  // Every node applies the same claims in log order, so every node names the next claim alike.
  assert.equal(claimId(claimedBy(claimedBy(created, 'n3'), 'n1')), claimId(backToN1));
});
