// FNV-1a over UTF-16 code units: the hash a cluster places VMs in shards and classes in code groups with.
// It is part of the cluster's format: every node and every version must give the same value.

const FNV_OFFSET = 0x811c9dc5;

/** FNV-1a 32-bit of `text`; `from` continues the hash of what came before it. */
export function fnv1a(text: string, from: number = FNV_OFFSET): number {
  let hash = from;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
