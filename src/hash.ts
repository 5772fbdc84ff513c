// FNV-1a over UTF-16 code units: the hash a cluster places VMs in shards and classes in code groups with.
// It is part of the cluster's format: every node and every version must give the same value.

/** FNV-1a 32-bit of `text` from its code unit `start` on. */
export function fnv1a(text: string, start = 0): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
