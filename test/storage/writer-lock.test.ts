// The writer lock of a data directory (src/storage/writer-lock.ts): one process opens the store at a time.
// What users rely on: a command waits for another command, hands its write to a running service instead of
// writing beside it, a second service on the directory is refused, and a lock left by a process that died,
// or whose pid another process now has (a restarted container), does not stop anyone.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { takeWriterLock, writerHolder } from '../../src/storage/writer-lock.ts';
import { tempDir } from '../helpers/service.ts';

test('a command waits for another command to give the lock up, then takes it', async () => {
  const dataDir = tempDir();
  const first = await takeWriterLock(dataDir, 'command', 0);
  assert.ok('release' in first);
  assert.equal(writerHolder(dataDir)?.role, 'command');
  // Without a wait it is refused, naming the holder.
  await assert.rejects(takeWriterLock(dataDir, 'command', 0), new RegExp(`another jvmlens command \\(pid ${process.pid}\\) is still writing`));
  const second = takeWriterLock(dataDir, 'command', 5_000);
  setTimeout(() => first.release(), 200);
  const taken = await second;
  assert.ok('release' in taken);
  taken.release();
  assert.equal(writerHolder(dataDir), null);
});

test('a command finds the running service instead of the lock; a second service is refused', async () => {
  const dataDir = tempDir();
  const service = await takeWriterLock(dataDir, 'service', 0, false);
  assert.deepEqual(await takeWriterLock(dataDir, 'command', 0), { service: writerHolder(dataDir) });
  await assert.rejects(takeWriterLock(dataDir, 'service', 0, false), /another jvmlens service \(pid \d+\) has .* open: one service per data directory/);
  service.release();
  const command = await takeWriterLock(dataDir, 'command', 0);
  assert.ok('release' in command);
  command.release();
});

test('a lock left by a process that died, or whose pid another process has now, is taken over', async () => {
  const dataDir = tempDir();
  const lockFile = join(dataDir, 'writer.lock');
  const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  // The lock as a service leaves it: a link naming its role, pid and start time.
  symlinkSync(`service:${ended.stdout}:`, lockFile);
  const afterDeath = await takeWriterLock(dataDir, 'command', 0);
  assert.ok('release' in afterDeath, 'the dead service no longer holds it');
  afterDeath.release();
  // A live process's pid, started at another time: the lock of an earlier process that had the same pid.
  const live = spawn(process.execPath, ['-e', 'setTimeout(() => undefined, 60_000)']);
  try {
    symlinkSync(`service:${live.pid}:1`, lockFile);
    const afterReuse = await takeWriterLock(dataDir, 'service', 0, false);
    assert.equal(writerHolder(dataDir)?.pid, process.pid);
    afterReuse.release();
  } finally {
    live.kill();
  }
  // This process's own pid in a lock it does not hold (a container restarted with the same pid).
  symlinkSync(`service:${process.pid}:`, lockFile);
  const own = await takeWriterLock(dataDir, 'service', 0, false);
  own.release();
});
