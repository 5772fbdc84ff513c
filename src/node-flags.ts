// How Node should run `jvmlens serve`: flags V8 reads only when the process starts (v8.setFlagsFromString
// later changes nothing for them), so every launcher of the service passes them.

/**
 * A young generation of up to 64 MiB per semi-space (V8's default is 16): an agent batch's parsed events and
 * a logged command's decoded ones live for a transaction, and with the default they were copied through
 * several young collections. Measured (README "Performance: the young generation"): CPU per known code
 * item 7–16 % lower, on a single node and on three cluster nodes alike.
 */
export const SERVE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];

/**
 * The flags of SERVE_NODE_FLAGS this Node process was started without (on its command line or in
 * NODE_OPTIONS); none under Deno, whose V8 flags are given as `--v8-flags=`.
 */
export function missingServeFlags(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): string[] {
  if ('Deno' in globalThis) return [];
  const given = [...execArgv, ...nodeOptions.split(/\s+/)];
  return SERVE_NODE_FLAGS.filter((flag) => !given.some((arg) => arg.split('=')[0] === flag.split('=')[0]));
}
