// Real headless browsers for the pages the service serves: Debian's Chromium driven by playwright-core, and
// Debian's Firefox ESR driven by puppeteer-core.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import type { Browser as FirefoxBrowser } from 'puppeteer-core';

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

const FIREFOX = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';

/** Why the Firefox test cannot run here, or null; under CI=true a missing Firefox fails (.ci/run installs firefox-esr). */
export function firefoxMissing(): string | null {
  if (existsSync(FIREFOX)) return null;
  if (process.env.CI === 'true') throw new Error(`no Firefox at ${FIREFOX}: .ci/run installs Debian's firefox-esr package`);
  return `no Firefox at ${FIREFOX} (apt-get install firefox-esr, or set FIREFOX_PATH)`;
}

/** Debian's Firefox ESR, driven over WebDriver BiDi by puppeteer-core (playwright-core drives only its own patched Firefox). */
export function launchFirefox(): Promise<FirefoxBrowser> {
  return puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX, headless: true });
}
