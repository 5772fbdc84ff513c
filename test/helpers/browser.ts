// A real headless Chromium (Debian's package) driven by playwright-core, for the pages the service serves.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why browser tests cannot run here, or null: under CI=true a missing browser fails instead (.ci/run installs it). */
export function browserMissing(): string | null {
  if (existsSync(CHROMIUM)) return null;
  if (process.env.CI === 'true') throw new Error(`no Chromium at ${CHROMIUM}: .ci/run installs Debian's chromium package`);
  return `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}
