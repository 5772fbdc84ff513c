// A node the cluster's log was truncated past (a new node once the log dropped its beginning, or one stopped
// longer than the log keeps a stopped node's place), or one that read another history of the log than the
// others (log-checks.ts), starts from a copy of a live node's data (snapshot.ts), a node of its own code
// group, taken before it opens its store; it then applies the log from where the copy stands.
import { existsSync } from 'node:fs';
import { readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { storedCodeGroup } from '../storage/code-groups.ts';
import type { CodeGroup } from '../storage/code-groups.ts';
import { openStore, PAGES_DIR, STORE_FILE } from '../storage/store.ts';
import { codeGroupOf } from './code-group-choice.ts';
import { ClusterLog, describeNatsError } from './log.ts';
import { forgetWindows, readersOfRight, storedOddWindow } from './log-checks.ts';
import type { OddWindow } from './right-reading.ts';
import { singleNodeData } from './log-identity.ts';
import { answersFor, liveNodes } from './membership.ts';
import { appliedSeq } from './replica.ts';
import { fetchSnapshot } from './snapshot.ts';
import { FINISHING_HAND_OVER, handOverOwnWrites } from './hand-over-writes.ts';
import { WriteJournal } from './write-journal.ts';

/** Where the copy is written, inside the data directory, until it is complete. */
const INCOMING_DIR = 'restoring';

/**
 * The log sequence the data directory's store has applied, and the window of the log it read otherwise than
 * the other nodes; null when it cannot be read (it is left alone then).
 */
async function storedPlace(dataDir: string): Promise<{ applied: number; odd: OddWindow | null; single: boolean; codeGroup: CodeGroup } | null> {
  if (!existsSync(join(dataDir, STORE_FILE))) return { applied: 0, odd: null, single: false, codeGroup: { count: 1, of: 0 } };
  try {
    const store = openStore(dataDir, { readOnly: true });
    try {
      return { applied: appliedSeq(store), odd: storedOddWindow(store), single: singleNodeData(store) !== null, codeGroup: storedCodeGroup(store) };
    } finally {
      await store.close();
    }
  } catch {
    // A directory of another schema version: opening it for writing migrates it, then it follows the log.
    return null;
  }
}

/** Puts the complete copy in place of the store and its pages (a crash in between leaves no store: the next start copies again). */
async function replaceStore(dataDir: string, incoming: string): Promise<void> {
  for (const name of [STORE_FILE, `${STORE_FILE}-lock`, PAGES_DIR]) await rm(join(dataDir, name), { recursive: true, force: true });
  for (const name of await readdir(incoming)) await rename(join(incoming, name), join(dataDir, name));
  await rm(incoming, { recursive: true, force: true });
}

/**
 * The hand-over of this node's writes its last process began and did not finish (killed meanwhile,
 * node.ts): done now, before the copy replaces the data that held them. The writes it appends again stay
 * journaled until the node reads them back once it runs.
 */
async function finishHandOver(config: Config, log: ClusterLog, odd: OddWindow, logger: Logger): Promise<void> {
  const journal = WriteJournal.open(config.dataDir);
  try {
    const writes = journal.toHandOver();
    if (writes.length === 0) return;
    logger.warn(FINISHING_HAND_OVER, { writes: writes.length, agreed: odd.nodes });
    log.checkWrites(logger, journal);
    await handOverOwnWrites(log.nc, writes, (write) => log.appendAgain(write), odd.nodes, logger);
    await journal.handedOver();
  } finally {
    await journal.close();
  }
}

/**
 * Before the store opens: when the log no longer holds the command after this node's last, or this node
 * read the odd history, copies a live node's data over this node's (asking each live node in turn, those
 * that read the right history where this one read an odd one; one that read an odd history itself gives none). Anything that stops
 * it (no NATS server, no live node that can give a copy) is logged, and the node starts as it is: health
 * then names the truncation or the odd history, and a restart while another node is UP tries again.
 */
export async function restoreIfNeeded(config: Config, logger: Logger): Promise<void> {
  const incoming = join(config.dataDir, INCOMING_DIR);
  await rm(incoming, { recursive: true, force: true });
  const place = await storedPlace(config.dataDir);
  // A single node's data is never copied over: the node's join refuses it, or adopts an empty log (log-identity.ts).
  if (place === null || place.single) return;
  const { applied, odd } = place;
  let log: ClusterLog;
  try {
    log = await ClusterLog.open(config.cluster, `jvmlens-${config.nodeId}-restore`, 'once', config.clusterCa);
  } catch (error) {
    logger.warn('could not ask the cluster log whether this node can follow it; starting as it is', { reason: describeNatsError(error as Error) });
    return;
  }
  try {
    if (odd === null && (applied >= (await log.lastSeq()) || (await log.holds(applied + 1)))) return;
    // A second process with a live node's id: its join refuses the id; copying first would be for nothing.
    if (await answersFor(log.nc, config.nodeId)) return;
    if (odd !== null) await finishHandOver(config, log, odd, logger);
    // A node of another code group stores other classes: only one of this node's group can give its data.
    const codeGroup = await codeGroupOf(config, place.codeGroup, log.nc, log.replicas, logger, true);
    const listed = config.testFaults.includes('unlisted-peers') ? [] : await liveNodes(log.nc);
    const group = listed.filter((node) => node.nodeId !== config.nodeId && node.codeGroup === codeGroup).map((node) => node.nodeId);
    // A node that read the odd history copies only one that read the right one (another node may have read
    // an odd one too and not know it yet): one the decision names, or one that recorded the window alike since
    // (with code groups, its group's other node may have). The membership, read through one server, can lack live nodes for
    // minutes (the chaos bench's odd node found no peer three times in two minutes, the two others up; likely
    // a replica of its bucket left behind by a pause): with one code group, those nodes are asked even where
    // it does not list them, each answering for itself.
    const peers = odd === null ? group : (await readersOfRight(log.nc, odd)).filter((nodeId) => nodeId !== config.nodeId && (config.codeGroups === 1 || group.includes(nodeId)));
    if (odd === null) logger.info('the cluster log was truncated past this node: copying a live node\'s data first', { applied, peers });
    else logger.warn('this node read the cluster log otherwise than the other nodes: copying the data of one that read the history taken as right first', { applied, windowEndingAt: odd.to, agreed: odd.nodes, peers });
    for (const peer of peers) {
      const started = Date.now();
      try {
        const copy = await fetchSnapshot(log.nc, peer, config.nodeId, incoming, logger);
        await replaceStore(config.dataDir, incoming);
        // The copy is in place whatever this does: a failure here is not the peer's.
        if (odd !== null) await forgetWindows(log.nc, config.nodeId).catch((error: Error) => logger.warn('deleting the window hashes of the history this node read failed; the other nodes may note differing windows', { reason: error.message }));
        logger.info('this node starts from a copy of a live node\'s data', { from: peer, bytes: copy.bytes, applied: copy.applied, ms: Date.now() - started });
        return;
      } catch (error) {
        logger.warn('a live node did not give a copy of its data', { from: peer, reason: (error as Error).message });
        await rm(incoming, { recursive: true, force: true });
      }
    }
    logger.error(`no live node of this node's code group gave a copy of its data; this node starts as it is and ${odd === null ? 'cannot follow the log' : 'stays DOWN'}`, { applied, codeGroup, peers });
  } catch (error) {
    logger.warn('restoring this node from a live node failed; starting as it is', { reason: (error as Error).message });
  } finally {
    await log.close();
  }
}
