// Where two nodes' readings of a window of the log part (log-checks.ts finds that the windows differ): each
// node keeps its own hash of each command it applied (applied-windows.ts `appliedCommands`), records them in
// the checks' bucket for a window that differs, and compares them with the other nodes' there. The chaos
// rows' divergences were known only as a window of 4,096 commands.
import type { KV } from '@nats-io/kv';
import type { Logger } from '../log.ts';

/** The bucket's keys holding a node's own hash of each command of a window that differed: `<COMMANDS>.<to>.<nodeId>`. */
const COMMANDS = 'commands';
/** How many windows' records and partings a node remembers having made (a window is recorded and told once). */
const WINDOWS_REMEMBERED = 64;

/** What a node logs once per differing window, when the nodes it differs from recorded their commands' hashes too: where each reading parts from its own. */
export const PARTING = 'the first command of the window this node read otherwise than other nodes';

/** Where two readings part (partingOf). */
export interface Parting {
  /** The first command both applied and read otherwise. */
  seq: number;
  /** Where the other node read this node's command there, if in the window: a write read at another place, not another write. */
  otherReadItAt: number | null;
  /** Where this node read the other's command there, if in the window. */
  readTheirsAt: number | null;
}

/**
 * Where two nodes' readings of the commands from `from` on part, or null where they do not (a command one of
 * them did not apply, or no longer keeps, hashed 0, is passed over).
 */
export function partingOf(from: number, mine: Uint32Array, theirs: Uint32Array): Parting | null {
  const at = (hashes: Uint32Array, crc: number) => {
    const index = hashes.indexOf(crc);
    return index < 0 ? null : from + index;
  };
  for (let i = 0; i < Math.min(mine.length, theirs.length); i++) {
    if (mine[i] === 0 || theirs[i] === 0 || mine[i] === theirs[i]) continue;
    return { seq: from + i, otherReadItAt: at(theirs, mine[i]), readTheirsAt: at(mine, theirs[i]) };
  }
  return null;
}

/**
 * Whether reading `a` of the commands from `from` on holds, where it first parts from reading `b`, commands
 * that `b` lacks: `b`'s command there is one `a` read later, every later command shifted (the histories of
 * chaos runs on nats-server 2.9.10 parted so, one lacking a run of commands that the others held).
 */
export function holdsMore(from: number, a: Uint32Array, b: Uint32Array): boolean {
  const parting = partingOf(from, b, a);
  return parting !== null && parting.otherReadItAt !== null && parting.otherReadItAt > parting.seq;
}

/** One node's records of its commands' hashes for the windows that differ, and what it told of them. */
export class LogPartings {
  readonly #kv: KV;
  readonly #nodeId: string;
  readonly #logger: Logger;
  /** This node's own hash of each command from `from` to `to` as it applied them. */
  readonly #commandsOf: (from: number, to: number) => Uint32Array;
  /** The windows whose commands' hashes this node recorded, and those it told where readings part. */
  readonly #recorded = new Set<number>();
  readonly #told = new Set<number>();

  constructor(kv: KV, nodeId: string, logger: Logger, commandsOf: (from: number, to: number) => Uint32Array) {
    this.#kv = kv;
    this.#nodeId = nodeId;
    this.#logger = logger;
    this.#commandsOf = commandsOf;
  }

  /**
   * Records this node's own hash of each command from `from` to `to`, a window that differs from `nodes`'
   * readings, once, and tells where its reading parts from that of each of them that recorded theirs, once per
   * window (the others tell it as they compare): logged, so that an operator knows which command to look for.
   * The first command it parts at, or null where none is told now.
   */
  async tell(from: number, to: number, nodes: readonly string[]): Promise<number | null> {
    if (this.#told.has(to)) return null;
    const mine = this.#commandsOf(from, to);
    if (!this.#recorded.has(to)) {
      await this.#kv.put(`${COMMANDS}.${to}.${this.#nodeId}`, new Uint8Array(mine.buffer));
      remember(this.#recorded, to);
    }
    const partings = [];
    for (const [nodeId, theirs] of await this.recorded(from, to, nodes)) {
      const parting = partingOf(from, mine, theirs);
      if (parting !== null) partings.push({ node: nodeId, ...parting });
    }
    if (partings.length === 0) return null;
    remember(this.#told, to);
    this.#logger.warn(PARTING, { from, to, partings });
    return Math.min(...partings.map((parting) => parting.seq));
  }

  /** Each of `nodes`' own hash of each command from `from` to `to`: this node's, and those the others recorded (one that did not is left out). */
  async recorded(from: number, to: number, nodes: readonly string[]): Promise<Map<string, Uint32Array>> {
    const commands = new Map<string, Uint32Array>();
    for (const nodeId of nodes) {
      if (nodeId === this.#nodeId) {
        commands.set(nodeId, this.#commandsOf(from, to));
        continue;
      }
      const entry = await this.#kv.get(`${COMMANDS}.${to}.${nodeId}`);
      // Copied into a buffer of its own (the value may be a view into a larger one, at any offset).
      if (entry !== null && entry.operation === 'PUT') commands.set(nodeId, new Uint32Array(new Uint8Array(entry.value).buffer));
    }
    return commands;
  }
}

/** Adds `to` to `windows`, dropping the oldest beyond WINDOWS_REMEMBERED. */
function remember(windows: Set<number>, to: number): void {
  windows.add(to);
  if (windows.size > WINDOWS_REMEMBERED) windows.delete(windows.values().next().value as number);
}
