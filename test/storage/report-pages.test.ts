// Report pages as files in the data directory: written, read, kept as msgpack, removed; ids that are not
// report ids never name a path; a schema 3 directory's pages move out of LMDB when it is opened.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { open } from 'lmdb';
import { PageFiles } from '../../src/storage/page-files.ts';
import { migrateReportPagesToFiles } from '../../src/storage/report-pages-migration.ts';
import { openStore, SCHEMA_VERSION } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

const REPORT = '0b9e7c3a-1d2f-4e5a-8b6c-7d8e9f0a1b2c';

test('a page is a file: written whole, read back, its msgpack kept beside it, all removed with the report', async () => {
  const files = new PageFiles(join(tempDir(), 'pages'));
  assert.equal(await files.json(REPORT, 0), undefined, 'no page before it is written');
  await files.putJson(REPORT, 0, Buffer.from('[{"a":1}]'));
  assert.equal((await files.json(REPORT, 0))!.toString(), '[{"a":1}]');
  await files.putJson(REPORT, 1, Buffer.from('[{"a":2},{"a":3}]xxxx').subarray(0, 17));
  assert.equal((await files.json(REPORT, 1))!.toString(), '[{"a":2},{"a":3}]', 'a view writes only its bytes');
  await files.sync(REPORT);
  await files.putJson(REPORT, 0, Buffer.from('[]'));
  assert.equal((await files.json(REPORT, 0))!.toString(), '[]', 'a page written again is replaced whole');
  assert.equal(await files.json(REPORT, 2), undefined);
  assert.equal(await files.msgpack(REPORT, 0), undefined);
  await files.putMsgpack(REPORT, 0, Buffer.from([0x91, 0x01]));
  assert.deepEqual([...(await files.msgpack(REPORT, 0))!], [0x91, 0x01]);
  assert.deepEqual(readdirSync(join(files.dir, REPORT)).sort(), ['0.json', '0.msgpack', '1.json'], 'no partial file left');
  await files.remove(REPORT);
  assert.ok(!existsSync(join(files.dir, REPORT)));
  assert.equal(await files.json(REPORT, 0), undefined);
  await files.remove(REPORT);
  await files.sync(REPORT);
  await assert.rejects(files.putMsgpack(REPORT, 0, Buffer.from([0x90])), /ENOENT/, 'no msgpack kept for a report deleted meanwhile');
});

test('a page written in parts (a cluster page over max_payload): the first part replaces the file, the next go on after it', async () => {
  const files = new PageFiles(join(tempDir(), 'pages'));
  await files.putJson(REPORT, 0, Buffer.from('[{"old":"a longer page than the new one"}]'));
  const page = Buffer.from('[{"a":1},{"b":2},{"c":3}]');
  await files.putJson(REPORT, 0, page.subarray(0, 9));
  await files.putJson(REPORT, 0, page.subarray(9, 17), 9);
  await files.putJson(REPORT, 0, page.subarray(17), 17);
  assert.equal((await files.json(REPORT, 0))!.toString(), page.toString());
  // Applied again after a crash, a later part lands on the same bytes.
  await files.putJson(REPORT, 0, page.subarray(9, 17), 9);
  assert.equal((await files.json(REPORT, 0))!.toString(), page.toString());
  // A later part of a page whose folder a backup skipped (its report deleted meanwhile) is written, not
  // refused: the delete that follows in the log removes it.
  const deleted = '1b9e7c3a-1d2f-4e5a-8b6c-7d8e9f0a1b2c';
  await files.putJson(deleted, 0, page.subarray(9, 17), 9);
  assert.equal((await files.json(deleted, 0))!.length, 17);
  await files.remove(deleted);
  assert.equal(await files.json(deleted, 0), undefined);
});

test('an id that is not a report id never names a path', async () => {
  const files = new PageFiles(join(tempDir(), 'pages'));
  for (const id of ['../x', 'a/b', '', '.', '..', 'x'.repeat(101)]) {
    await assert.rejects(files.json(id, 0), /is not a report id/, id);
    await assert.rejects(files.putJson(id, 0, Buffer.from('[]')), /is not a report id/, id);
  }
});

test('a schema 3 data directory has its pages moved out of LMDB when opened for writing, once', async () => {
  const dataDir = tempDir();
  await openStore(dataDir).close();
  // Schema 3 kept pages in LMDB: JSON in `pageJson`, msgpack made at a first msgpack read in `pages`.
  const pages = [
    { key: [REPORT, 0], json: '[{"methodName":"run()"}]' },
    { key: [REPORT, 1], json: '[{"methodName":"stop()"}]' },
    { key: ['lazy', 0], json: '[]' },
  ] as const;
  const env = open({ path: join(dataDir, 'jvmlens.mdb'), maxDbs: 32 });
  const pageJson = env.openDB<Buffer, (string | number)[]>({ name: 'pageJson', encoding: 'binary' });
  const msgpack = env.openDB<Buffer, (string | number)[]>({ name: 'pages', encoding: 'binary' });
  const meta = env.openDB<number, string>({ name: 'meta', encoding: 'msgpack' });
  for (const { key, json } of pages) pageJson.putSync([...key], Buffer.from(json));
  msgpack.putSync([REPORT, 0], Buffer.from([0x91, 0x80]));
  meta.putSync('schemaVersion', 3);
  await env.close();

  const store = openStore(dataDir);
  try {
    assert.equal(store.meta.get('schemaVersion'), SCHEMA_VERSION);
    for (const { key, json } of pages) assert.equal((await store.pageFiles.json(key[0], key[1]))?.toString(), json);
    assert.equal(await store.pageFiles.msgpack(REPORT, 0), undefined, 'msgpack is made again when asked for');
    const left = store.env.openDB<Buffer, (string | number)[]>({ name: 'pageJson', encoding: 'binary' });
    assert.equal([...left.getKeys()].length, 0, 'nothing left in LMDB');
    const lines: string[] = [];
    migrateReportPagesToFiles(store, (line) => lines.push(line));
    assert.deepEqual(lines, [], 'a second migration finds it done');
  } finally {
    await store.close();
  }
});

test('the migration says what it does', async () => {
  const dataDir = tempDir();
  const store = openStore(dataDir);
  try {
    const pageJson = store.env.openDB<Buffer, (string | number)[]>({ name: 'pageJson', encoding: 'binary' });
    for (let page = 0; page < 150; page++) pageJson.putSync([REPORT, page], Buffer.from(`[${page}]`));
    store.meta.putSync('schemaVersion', 3);
    const lines: string[] = [];
    migrateReportPagesToFiles(store, (line) => lines.push(line));
    assert.match(lines[0], /migrating the data directory from schema 3 to 4: 150 report pages from LMDB to .*pages/);
    assert.match(lines[1], /migrating: 100 of 150 report pages written/);
    assert.match(lines.at(-1)!, /migrated to schema 4 in/);
    assert.equal((await store.pageFiles.json(REPORT, 149))?.toString(), '[149]');
  } finally {
    await store.close();
  }
});
