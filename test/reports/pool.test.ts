// The worker pool's warm-up: ready means every thread loaded its modules and did what the ping asks.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { WorkerPool } from '../../src/engine/reports/pool.ts';
import { openStore } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

const THREADS = 4;

test('a warm-up resolves once every thread answered, however their loading interleaves', async () => {
  // Four threads on two cores load at different speeds: the first loaded answers pings of others still loading.
  for (let pool = 0; pool < 4; pool++) {
    const dataDir = tempDir('jvmlens-pool-');
    await openStore(dataDir).close();
    const workers = new WorkerPool(dataDir, THREADS);
    try {
      const ids = await workers.warmUp();
      assert.equal(ids.size, THREADS, `threads that answered: ${[...ids].join(', ')}`);
    } finally {
      await workers.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
});
