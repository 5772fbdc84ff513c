// The web console in Firefox (Debian's firefox-esr, over WebDriver BiDi): the main path a user takes works
// there as in Chromium: sign in, fleet counts that match the API, the vulnerability list, a CVE's VMs, a VM.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import { firefoxMissing, launchFirefox } from '../helpers/browser.ts';
import { runReport } from '../helpers/reports.ts';
import { request, runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const skip = firefoxMissing() ?? false;

type Json = Record<string, any>;

describe('web console in Firefox', { skip }, () => {
  let service: RunningService;
  let browser: Browser;
  let page: Page;
  let dir = '';
  const errors: string[] = [];

  before(async () => {
    service = await startService();
    dir = tempDir('jvmlens-firefox-');
    const seeded = await runCli(['seed', '--vms', '120', '--components-per-vm', '15', '--methods', '100', '--gateway', service.gatewayUrl, '--key', service.apiKey]);
    assert.equal(seeded.code, 0, seeded.stderr);
    browser = await launchFirefox();
    page = await browser.newPage();
    await page.setViewport({ width: 1366, height: 900 });
    page.on('pageerror', (error) => errors.push(String(error)));
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  const shot = async (name: string) => {
    const folder = process.env.CONSOLE_SCREENSHOTS ?? join(dir, 'screenshots');
    mkdirSync(folder, { recursive: true });
    await page.screenshot({ path: join(folder, `firefox-${name}.png`) as `${string}.png`, fullPage: true });
  };

  test('sign in, and the fleet counts are the API\'s', async () => {
    await page.goto(`${service.apiUrl}/`);
    assert.match(page.url(), /\/console\/$/);
    await page.type('#key', service.apiKey);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=vm-total]');
    await page.waitForSelector('[data-testid="chart-tags.env"] canvas');
    const byState = await runReport(service, 'jvmInventory', { groupBy: ['state'] });
    const total = byState.items.reduce((sum, item) => sum + (item.count as number), 0);
    assert.equal(await page.$eval('[data-testid=vm-total]', (element) => element.textContent), `${total} VMs`);
    await shot('fleet');
  });

  test('the vulnerability list, a CVE\'s VMs and one VM', async () => {
    await page.goto(`${service.apiUrl}/console/#/cves`);
    await page.waitForSelector('[data-testid=cve-list]');
    const summary = (await request<Json>(`${service.apiUrl}/public/cve/summary`, { key: service.apiKey })).body;
    const ids = await page.$$eval('[data-testid=cve-list] tbody tr td:first-child', (cells) => cells.map((cell) => cell.textContent));
    assert.deepEqual(ids, summary.data.map((cve: Json) => cve.cveId));
    await shot('vulnerabilities');
    await page.click('[data-testid=cve-list] tbody tr:first-child a');
    await page.waitForSelector('[data-testid=cve-vms] tbody tr');
    await page.click('[data-testid=cve-vms] tbody tr:first-child a');
    await page.waitForSelector('[data-testid=vm-id]');
    await page.waitForSelector('[data-testid=vm-cves]');
    assert.match(await page.$eval('[data-testid=vm-cves]', (element) => element.textContent ?? ''), new RegExp(summary.data[0].cveId));
    await shot('instance');
    assert.deepEqual(errors, []);
  });
});
