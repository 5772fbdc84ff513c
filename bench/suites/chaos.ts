// The hardening campaign's long kill -9 loop: 100 SIGKILLs during ingestion (3 with --quick); the figures
// that matter are acknowledged batches and lost ones (always 0), not speed.
import { runKillLoop } from '../kill-loop.ts';
import type { Suite } from '../harness.ts';
import { progress } from '../harness.ts';

const NAME = 'chaos';
const ROW = 'kill -9 during ingestion, restart, check every acknowledged batch';

export const suite: Suite = {
  name: NAME,
  rows: [ROW],
  async run(options) {
    const kills = options.quick ? 3 : 100;
    const started = performance.now();
    const result = await runKillLoop(kills, (line) => progress(`${NAME}: ${line}`));
    if (result.lost > 0 || result.partial > 0) throw new Error(`acknowledged data lost or partial: ${JSON.stringify(result)}`);
    const seconds = (performance.now() - started) / 1000;
    return [{
      suite: NAME,
      name: ROW,
      size: `${result.kills} kills`,
      rate: result.acknowledged / seconds,
      unit: 'ops/s',
      meanMs: (seconds * 1000) / Math.max(1, result.kills),
      p50Ms: 0,
      p99Ms: 0,
      rssMb: 0,
      extra: { kills: result.kills, acknowledgedBatches: result.acknowledged, lost: result.lost, partial: result.partial, unanswered: result.unanswered },
    }];
  },
};
