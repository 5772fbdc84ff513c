// Reading OSV sources: JSON files (one record or an array), directories, and zip archives written here byte by byte.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { readOsvSources } from '../../src/vuln/sources.ts';
import type { OsvSourceItem } from '../../src/vuln/sources.ts';
import { validateOsvRecord } from '../../src/vuln/osv.ts';

/** CRC-32 bit by bit: deliberately not the table-driven one the reader uses. */
function bitwiseCrc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

interface ZipInput {
  name: string;
  content: string;
  deflate?: boolean;
  /** Store a wrong CRC, to check the reader notices. */
  badCrc?: boolean;
}

function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(value);
  return b;
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value >>> 0);
  return b;
}

/** A zip archive (PKWARE APPNOTE 4.3): local headers and data, central directory, end record. */
function buildZip(inputs: ZipInput[], options: { comment?: string; entryCount?: number } = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const input of inputs) {
    const raw = Buffer.from(input.content, 'utf8');
    const data = input.deflate ? deflateRawSync(raw) : raw;
    const crc = input.badCrc ? bitwiseCrc32(raw) ^ 1 : bitwiseCrc32(raw);
    const name = Buffer.from(input.name, 'utf8');
    const method = input.deflate ? 8 : 0;
    const common = [u16(20), u16(0x800), u16(method), u16(0), u16(0x21), u32(crc), u32(data.length), u32(raw.length), u16(name.length)];
    const local = Buffer.concat([u32(0x04034b50), ...common, u16(0), name, data]);
    centrals.push(Buffer.concat([u32(0x02014b50), u16(20), ...common, u16(0), u16(0), u16(0), u16(0), u32(0), u32(offset), name]));
    locals.push(local);
    offset += local.length;
  }
  const directory = Buffer.concat(centrals);
  const comment = Buffer.from(options.comment ?? '', 'utf8');
  const count = options.entryCount ?? inputs.length;
  const end = Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(count), u16(count), u32(directory.length), u32(offset), u16(comment.length), comment]);
  return Buffer.concat([...locals, directory, end]);
}

function osv(id: string): string {
  return JSON.stringify({ id, modified: '2024-01-01T00:00:00Z', affected: [{ package: { ecosystem: 'Maven', name: 'g:a' }, versions: ['1'] }] });
}

async function collect(paths: string[]): Promise<OsvSourceItem[]> {
  const items: OsvSourceItem[] = [];
  for await (const item of readOsvSources(paths)) items.push(item);
  return items;
}

function summary(items: OsvSourceItem[], root: string): string[] {
  return items.map((item) => {
    const file = item.file.replace(root, '<tmp>');
    if (item.error !== undefined) return `${file} ERROR`;
    return `${file} ${(item.json as { id?: string }).id}`;
  });
}

describe('readOsvSources', () => {
  let root = '';

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'jvmlens-osv-'));
    await mkdir(join(root, 'tree', 'sub', 'deeper'), { recursive: true });
    await writeFile(join(root, 'tree', 'a.json'), osv('A'));
    await writeFile(join(root, 'tree', 'sub', 'b.json'), JSON.stringify([JSON.parse(osv('B1')), JSON.parse(osv('B2'))]));
    await writeFile(join(root, 'tree', 'sub', 'deeper', 'c.JSON'), osv('C'));
    await writeFile(join(root, 'tree', 'sub', 'notes.txt'), 'not a record');
    await writeFile(join(root, 'tree', 'sub', 'broken.json'), '{"id": ');
    await writeFile(join(root, 'all.zip'), buildZip([
      { name: 'GHSA-1.json', content: osv('Z1'), deflate: true },
      { name: 'dir/', content: '' },
      { name: 'dir/GHSA-2.json', content: osv('Z2') },
      { name: 'README.md', content: '# not json' },
      { name: 'pair.json', content: `[${osv('Z3')},${osv('Z4')}]`, deflate: true },
      { name: 'corrupt.json', content: osv('Z5'), deflate: true, badCrc: true },
      { name: 'GHSA-6.json', content: osv('Z6'), deflate: true },
    ], { comment: 'an archive comment' }));
    await writeFile(join(root, 'garbage.zip'), Buffer.from('this is not a zip archive at all, but long enough'));
    await writeFile(join(root, 'zip64.zip'), buildZip([{ name: 'a.json', content: osv('X') }], { entryCount: 0xffff }));
    // Entries of about 1.5 MB (stored) and one of 9 MB: they straddle and outgrow the reader's 4 MB read-ahead.
    const padded = (id: string, bytes: number) => JSON.stringify({ ...JSON.parse(osv(id)), details: 'x'.repeat(bytes) });
    await writeFile(join(root, 'large.zip'), buildZip([
      ...Array.from({ length: 6 }, (_, k) => ({ name: `L${k}.json`, content: padded(`L${k}`, 1_500_000 + k) })),
      { name: 'huge.json', content: padded('H', 9_000_000) },
      { name: 'small.json', content: osv('S'), deflate: true },
    ]));
  });

  after(async () => rm(root, { recursive: true, force: true }));

  it('reads a directory recursively, JSON files only, arrays element by element, bad JSON as an error', async () => {
    assert.deepEqual(summary(await collect([join(root, 'tree')]), root), [
      '<tmp>/tree/a.json A',
      '<tmp>/tree/sub/b.json[0] B1',
      '<tmp>/tree/sub/b.json[1] B2',
      '<tmp>/tree/sub/broken.json ERROR',
      '<tmp>/tree/sub/deeper/c.JSON C',
    ]);
    const broken = (await collect([join(root, 'tree', 'sub', 'broken.json')]))[0];
    assert.match(broken.error ?? '', /^invalid JSON at line 1, column 8: /);
  });

  it('reads stored and deflated zip entries, skips directories and other files, and reports a corrupt entry', async () => {
    const items = await collect([join(root, 'all.zip')]);
    assert.deepEqual(summary(items, root), [
      '<tmp>/all.zip!GHSA-1.json Z1',
      '<tmp>/all.zip!dir/GHSA-2.json Z2',
      '<tmp>/all.zip!pair.json[0] Z3',
      '<tmp>/all.zip!pair.json[1] Z4',
      '<tmp>/all.zip!corrupt.json ERROR',
      '<tmp>/all.zip!GHSA-6.json Z6',
    ]);
    assert.match(items[4].error ?? '', /CRC-32 mismatch/);
  });

  it('reports a file that is not a zip, a zip64 archive and a missing path, and goes on', async () => {
    const items = await collect([join(root, 'garbage.zip'), join(root, 'zip64.zip'), join(root, 'missing.json'), join(root, 'tree', 'a.json')]);
    assert.deepEqual(summary(items, root), ['<tmp>/garbage.zip ERROR', '<tmp>/zip64.zip ERROR', '<tmp>/missing.json ERROR', '<tmp>/tree/a.json A']);
    assert.match(items[0].error ?? '', /not a zip archive/);
    assert.match(items[1].error ?? '', /zip64 archives are not supported/);
    assert.match(items[2].error ?? '', /ENOENT/);
  });

  it('reads entries that straddle or outgrow the read-ahead window, byte for byte', async () => {
    const items = await collect([join(root, 'large.zip')]);
    assert.deepEqual(summary(items, root), [...[0, 1, 2, 3, 4, 5].map((k) => `<tmp>/large.zip!L${k}.json L${k}`), '<tmp>/large.zip!huge.json H', '<tmp>/large.zip!small.json S']);
    assert.deepEqual(items.slice(0, 6).map((item) => ((item.json as { details: string }).details.length)), [0, 1, 2, 3, 4, 5].map((k) => 1_500_000 + k));
  });

  it('yields records that validate', async () => {
    const items = await collect([join(root, 'all.zip')]);
    const ids = items.filter((item) => item.json !== undefined).map((item) => {
      const result = validateOsvRecord(item.json);
      assert.ok(result.ok);
      return result.vulnerability.id;
    });
    assert.deepEqual(ids, ['Z1', 'Z2', 'Z3', 'Z4', 'Z6']);
  });
});
