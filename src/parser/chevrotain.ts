// Chevrotain's runtime, from its single-file build. The package entry loads lodash-es as hundreds of
// modules: about 0.6 s in every thread that parses (the service and each report worker), which start-up
// waits for. lib/chevrotain.mjs is the same library built as one module and loads in about 0.05 s. The
// package does not export that path, so it is found next to the entry; failing that, the entry is used.
import type * as Chevrotain from 'chevrotain';

async function load(): Promise<{ module: typeof Chevrotain; build: 'single file' | 'package entry' }> {
  try {
    // The entry is lib/src/api.js; under Deno with npm: specifiers the URL is not a file and this throws.
    const module = (await import(new URL('../chevrotain.mjs', import.meta.resolve('chevrotain')).href)) as typeof Chevrotain;
    return { module, build: 'single file' };
  } catch {
    return { module: await import('chevrotain'), build: 'package entry' };
  }
}

const { module: chevrotain, build } = await load();

/** Which build was loaded: a test checks that it is the single file, so an upgrade cannot slow start-up unseen. */
export const chevrotainBuild = build;

export const { createToken, EmbeddedActionsParser, EOF, Lexer } = chevrotain;
