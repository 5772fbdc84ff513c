// The code group of a node started without --code-group (README "Code groups"): at its first start, the
// group with the fewest live nodes, so that nodes started alike spread over the groups and a node started
// in place of a lost one fills its group. Its data directory records the group, which it keeps after.
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { CodeGroup } from '../storage/code-groups.ts';
import { keptBucket } from './buckets.ts';
import { goneNode, liveNodes } from './membership.ts';
import type { NodeInfo } from './membership.ts';

const BUCKET = 'jvmlens_code_group_claims';
/** One key for every claim: each choice updates it only where nobody did since it was read, so two nodes starting at once choose in turn. */
const KEY = 'claims';
/** A node's claim counts for its group this long, or until it joins (its heartbeat names the group from then on). */
const CLAIM_COUNTS_MS = 60_000;
const MAX_ATTEMPTS = 20;

interface Claim {
  codeGroup: number;
  at: number;
}

type Claims = Record<string, Claim>;

/**
 * The group with the fewest nodes: each live node, and each claim of a node not live yet, counts; the lowest of
 * those tied. `toCopy`: among the groups a live node stores, where there are such (a node that must copy a
 * live node's data could copy none of a group without one).
 */
export function leastHeldGroup(codeGroups: number, live: readonly { nodeId: string; codeGroup: number }[], claims: Readonly<Claims>, now: number, toCopy = false): number {
  const held = new Array<number>(codeGroups).fill(0);
  const stored = new Set<number>();
  for (const node of live) {
    if (node.codeGroup >= codeGroups) continue;
    held[node.codeGroup]++;
    stored.add(node.codeGroup);
  }
  const counted = new Set(live.map((node) => node.nodeId));
  for (const [nodeId, claim] of Object.entries(claims)) {
    if (!counted.has(nodeId) && now - claim.at < CLAIM_COUNTS_MS && claim.codeGroup < codeGroups) held[claim.codeGroup]++;
  }
  const candidates = [...held.keys()].filter((group) => !toCopy || stored.size === 0 || stored.has(group));
  return candidates.reduce((least, group) => (held[group] < held[least] ? group : least));
}

async function readClaims(kv: KV): Promise<{ claims: Claims; revision: number | null }> {
  const entry = await kv.get(KEY);
  if (entry === null || entry.operation !== 'PUT') return { claims: {}, revision: entry?.revision ?? null };
  return { claims: JSON.parse(entry.string()) as Claims, revision: entry.revision };
}

/** Writes `claims` where the key is still at `revision`; false where another node wrote it meanwhile. */
async function writeClaims(kv: KV, claims: Claims, revision: number | null): Promise<boolean> {
  try {
    if (revision === null) await kv.create(KEY, JSON.stringify(claims));
    else await kv.update(KEY, JSON.stringify(claims), revision);
    return true;
  } catch (error) {
    const moved = error instanceof JetStreamApiError && (error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);
    if (moved) return false;
    throw error;
  }
}

/** The other nodes whose heartbeats are live and whose process runs: one killed leaves its heartbeat for up to 15 s. */
async function runningNodes(nc: NatsConnection, nodeId: string): Promise<NodeInfo[]> {
  const listed = (await liveNodes(nc)).filter((node) => node.nodeId !== nodeId);
  const gone = await Promise.all(listed.map((node) => goneNode(nc, node.nodeId)));
  return listed.filter((_, index) => !gone[index]);
}

/**
 * The code group of node `nodeId`, which holds none yet: the one it claimed before (it stopped before its
 * data directory recorded it), else the least held one, claimed now.
 */
export async function chooseCodeGroup(nc: NatsConnection, nodeId: string, codeGroups: number, replicas: number, logger: Logger, toCopy = false): Promise<number> {
  const kv = await keptBucket(nc, BUCKET, { replicas });
  for (let attempt = 1; ; attempt++) {
    const { claims, revision } = await readClaims(kv);
    const earlier = claims[nodeId];
    if (earlier !== undefined && earlier.codeGroup < codeGroups) return earlier.codeGroup;
    const now = Date.now();
    const codeGroup = leastHeldGroup(codeGroups, await runningNodes(nc, nodeId), claims, now, toCopy);
    const kept = Object.fromEntries(Object.entries(claims).filter(([, claim]) => now - claim.at < CLAIM_COUNTS_MS));
    if (await writeClaims(kv, { ...kept, [nodeId]: { codeGroup, at: now } }, revision)) {
      logger.info('this node stores the code group with the fewest live nodes', { codeGroup, codeGroups });
      return codeGroup;
    }
    if (attempt >= MAX_ATTEMPTS) throw new Error(`could not claim a code group in ${MAX_ATTEMPTS} attempts: other nodes claimed one each time`);
  }
}

/** Drops this node's claim once it has joined: its heartbeat counts for its group from then on. */
export async function dropClaim(nc: NatsConnection, nodeId: string, replicas: number): Promise<void> {
  const kv = await keptBucket(nc, BUCKET, { replicas });
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const { claims, revision } = await readClaims(kv);
    if (claims[nodeId] === undefined) return;
    const others = { ...claims };
    delete others[nodeId];
    if (await writeClaims(kv, others, revision)) return;
  }
}

/**
 * This node's code group: the one given (`--code-group`), else the one its data directory records (`held`),
 * else the one chosen now (`toCopy`: by a node that must copy a live node's data first, restore.ts). Without
 * code groups, group 0: every class.
 */
export async function codeGroupOf(config: Pick<Config, 'codeGroup' | 'codeGroups' | 'nodeId'>, held: CodeGroup, nc: NatsConnection, replicas: number, logger: Logger, toCopy = false): Promise<number> {
  if (config.codeGroup !== null) return config.codeGroup;
  if (config.codeGroups === 1) return 0;
  if (held.count === config.codeGroups) return held.of;
  return chooseCodeGroup(nc, config.nodeId, config.codeGroups, replicas, logger, toCopy);
}
