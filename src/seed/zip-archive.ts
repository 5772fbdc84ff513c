// Zip archives (PKWARE APPNOTE 4.3) of stored or deflated entries: the OSV archives tests and benches import
// (`jvmlens cve import` reads them with src/vuln/zip.ts).
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  content: string | Buffer;
  deflate?: boolean;
}

export function zipArchive(entries: readonly ZipEntry[]): Buffer {
  const u16 = (n: number) => { const b = Buffer.alloc(2); b.writeUInt16LE(n); return b; };
  const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(n >>> 0); return b; };
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const raw = Buffer.isBuffer(entry.content) ? entry.content : Buffer.from(entry.content, 'utf8');
    const data = entry.deflate ? deflateRawSync(raw) : raw;
    const name = Buffer.from(entry.name, 'utf8');
    // version needed, flags (UTF-8 names), method, DOS time, DOS date (1980-01-01), crc, sizes, name length
    const common = [u16(20), u16(0x800), u16(entry.deflate ? 8 : 0), u16(0), u16(0x21), u32(crc32(raw)), u32(data.length), u32(raw.length), u16(name.length)];
    const local = Buffer.concat([u32(0x04034b50), ...common, u16(0), name, data]);
    central.push(Buffer.concat([u32(0x02014b50), u16(20), ...common, u16(0), u16(0), u16(0), u16(0), u32(0), u32(offset), name]));
    locals.push(local);
    offset += local.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(entries.length), u16(entries.length), u32(directory.length), u32(offset), u16(0)]);
  return Buffer.concat([...locals, directory, end]);
}
