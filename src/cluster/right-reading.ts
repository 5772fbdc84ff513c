// Which reading of a log window is taken as right where the nodes' hashes of it differ (log-checks.ts keeps
// the hashes and acts on the decision): pure functions of the hashes, the nodes that may serve and, where as
// many nodes read one way as another, each reading's commands.
import { holdsMore } from './log-partings.ts';

/** The first window a node read otherwise than the reading taken as right, and the nodes that read that. */
export interface OddWindow {
  to: number;
  nodes: string[];
  /** Whether the log, read again, told which reading is right (fewer than three nodes had recorded the window). */
  byLog?: boolean;
  /** Whether it was the reading holding commands the others lack, as many nodes having read another. */
  fullest?: boolean;
}

/** A window's reading taken as right: its hash and the nodes that recorded it. */
export interface RightReading {
  crc: string;
  nodes: string[];
  byLog?: boolean;
  fullest?: boolean;
}

/** Each node's own hash of each command of a window from `from` on, as it recorded them (log-partings.ts), to tell where readings part. */
export interface WindowCommands {
  from: number;
  of: ReadonlyMap<string, Uint32Array>;
}

/**
 * Which of the hashes that three nodes or more recorded of a window is taken as right: the one the most nodes
 * share; where as many share another, the one that holds, where it parts from each of those, commands they lack
 * (`holdsMore`: it lacks no acknowledged write that they hold), given each reading's `commands`; else the one
 * whose first node by id comes first (with no two alike, the first node's). Only a node that may serve
 * (`eligible`: one that runs, whose data can be copied) is taken as right. Null where all agree, where fewer
 * than three recorded (two that differ cannot tell which is right), or where no node may serve.
 */
export function rightReading(hashes: ReadonlyMap<string, string>, eligible: (nodeId: string) => boolean, commands?: WindowCommands): RightReading | null {
  if (hashes.size < 3 || new Set(hashes.values()).size === 1) return null;
  const most = mostShared(hashes, eligible);
  if (most.length > 1 && commands !== undefined) {
    const fullest = most.filter((reading) => most.every((other) => other === reading || readingHoldsMore(reading, other, commands)));
    if (fullest.length === 1) return { crc: fullest[0].crc, nodes: fullest[0].nodes, fullest: true };
  }
  return most.length === 0 ? null : { crc: most[0].crc, nodes: most[0].nodes };
}

/**
 * The readings of a window that the most nodes share, among those a node that may serve read: one, or several
 * where as many share each, by their first such node's id.
 */
export function mostShared(hashes: ReadonlyMap<string, string>, eligible: (nodeId: string) => boolean): (RightReading & { first: string })[] {
  const byCrc = new Map<string, string[]>();
  for (const [nodeId, crc] of hashes) byCrc.set(crc, [...(byCrc.get(crc) ?? []), nodeId]);
  let most: (RightReading & { first: string })[] = [];
  for (const [crc, nodes] of byCrc) {
    const first = nodes.filter(eligible).sort()[0];
    if (first === undefined || (most.length > 0 && nodes.length < most[0].nodes.length)) continue;
    if (most.length > 0 && nodes.length > most[0].nodes.length) most = [];
    most.push({ crc, nodes: nodes.sort(), first });
  }
  return most.sort((a, b) => (a.first < b.first ? -1 : 1));
}

/** Whether `reading` holds commands that `other` lacks where they part, as a node of each recorded them (false where none did). */
function readingHoldsMore(reading: RightReading, other: RightReading, commands: WindowCommands): boolean {
  const of = (nodes: string[]) => nodes.map((nodeId) => commands.of.get(nodeId)).find((hashes) => hashes !== undefined);
  const [mine, theirs] = [of(reading.nodes), of(other.nodes)];
  return mine !== undefined && theirs !== undefined && holdsMore(commands.from, mine, theirs);
}

/**
 * Whether a reading taken as right counts no more: every node that read it was found since to have read an
 * odd history of an earlier window (their finding reached the bucket after the decision). A log-read decision
 * stands: every node reading the window now reads it so.
 */
export function voided(right: Pick<RightReading, 'nodes' | 'byLog'>, to: number, marks: ReadonlyMap<string, number>): boolean {
  return right.byLog !== true && right.nodes.every((nodeId) => oddBefore(marks, nodeId, to));
}

/** Whether a node is marked as having read an odd history of a window before the one ending at `to` (one found odd later read this one as it stands). */
export function oddBefore(marks: ReadonlyMap<string, number>, nodeId: string, to: number): boolean {
  return (marks.get(nodeId) ?? to) < to;
}
