// Tag key and value rules (decisions §5), shared by ingestion and the explorer.

const TAG_KEY = /^[A-Za-z][A-Za-z0-9._-]{0,127}$/;
const TAG_VALUE = /^[A-Za-z0-9._ :/@-]{0,256}$/;

/** null when valid, else what is wrong. */
export function validateTagKey(key: string): string | null {
  return TAG_KEY.test(key) ? null : 'a tag key starts with a letter, then up to 127 of [A-Za-z0-9._-]';
}

export function validateTagValue(value: string): string | null {
  return TAG_VALUE.test(value) ? null : 'a tag value is up to 256 of [A-Za-z0-9._ :/@-]';
}
