// The inbox through which commands hand their requests to the running service: a request is answered once
// applied; one whose command gave up waiting is still applied, and its answer, which nobody will read, is
// removed after ten minutes rather than kept in the data directory for good.
import assert from 'node:assert/strict';
import { readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { applyInbox, applyRequest, InboxTimeoutError, sendToService } from '../../src/storage/inbox.ts';
import { openStore } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

test('a request is answered once the service applies it; the answer of a command that gave up is removed once ten minutes old', async () => {
  const dataDir = tempDir();
  const store = openStore(dataDir);
  const apply = () => applyInbox(dataDir, (request) => applyRequest(store, request));
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
