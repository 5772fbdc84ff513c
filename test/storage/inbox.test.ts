// The inbox through which commands hand their requests to the running service: a request is answered once
// applied; one whose command gave up waiting is still applied, and its answer, which nobody will read, is
// removed after ten minutes rather than kept in the data directory for good. A backup, which takes minutes on a
// large store, does not hold up the requests after it.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { applyInbox, applyRequest, BackupsUnderWay, InboxTimeoutError, sendToService } from '../../src/storage/inbox.ts';
import type { InboxRequest } from '../../src/storage/inbox.ts';
import { listKeys } from '../../src/storage/keys.ts';
import { openStore } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

test('a request is answered once the service applies it; the answer of a command that gave up is removed once ten minutes old', async () => {
  const dataDir = tempDir();
  const store = openStore(dataDir);
  const apply = () => applyInbox(dataDir, (request) => applyRequest(store, request), new BackupsUnderWay(assert.fail));
  const inbox = join(dataDir, 'inbox');
  try {
    const answered = sendToService(dataDir, { kind: 'keys.list' }, 5_000);
    assert.equal(await apply(), 1);
    assert.deepEqual(await answered, []);
    assert.deepEqual(readdirSync(inbox), [], 'the command took its answer');

    await assert.rejects(sendToService(dataDir, { kind: 'keys.list' }, 100), InboxTimeoutError);
    assert.equal(await apply(), 1, 'a request whose command gave up is applied all the same');
    const [unread] = readdirSync(inbox);
    assert.match(unread, /\.result\.json$/);
    assert.equal(await apply(), 0);
    assert.deepEqual(readdirSync(inbox), [unread], 'kept while its command might still look');
    const elevenMinutesAgo = (Date.now() - 11 * 60_000) / 1000;
    utimesSync(join(inbox, unread), elevenMinutesAgo, elevenMinutesAgo);
    await apply();
    assert.deepEqual(readdirSync(inbox), []);
  } finally {
    await store.close();
  }
});

test('a key asked for while a backup is made is answered before the backup ends, and the backup is answered whole', async () => {
  const dataDir = tempDir();
  const target = join(tempDir(), 'copy');
  const store = openStore(dataDir);
  const backups = new BackupsUnderWay(assert.fail);
  // The copy begins once released: a copy of a store of many gigabytes, as far as the requests after it can tell.
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const apply = (request: InboxRequest) => (request.kind === 'backup' ? released.then(() => applyRequest(store, request)) : applyRequest(store, request));
  try {
    const copied = sendToService(dataDir, { kind: 'backup', target }, 10_000);
    const keyPut = sendToService(dataDir, { kind: 'key.put', record: { keyId: 'k1', userId: 'operator', scopes: ['read'], hash: 'h1', createdAt: Date.now(), revokedAt: null } }, 10_000);
    assert.equal(await applyInbox(dataDir, apply, backups), 2);
    assert.equal(await keyPut, null);
    assert.deepEqual((await listKeys(store)).map((key) => key.keyId), ['k1']);
    assert.equal(existsSync(target), false, 'the backup has not begun');
    assert.equal(await applyInbox(dataDir, apply, backups), 0, 'a backup under way is not begun again');

    release();
    await backups.settled();
    assert.ok((await copied) as number > 0);
    assert.ok(readdirSync(target).includes('jvmlens.mdb'));
    assert.deepEqual(readdirSync(join(dataDir, 'inbox')), []);
  } finally {
    await store.close();
  }
});
