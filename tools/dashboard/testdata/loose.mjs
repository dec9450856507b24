// The voyages page lists the missions outside a voyage in a real Chromium (Debian's package)
// through playwright-core, for TestBrowser_LooseMissions. Steps are synchronised with the Go
// test as in browser.mjs: one JSON line per step, and a line "next" on stdin where it acts.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const env = name => { const v = process.env[name]; if (!v) throw new Error(`${name} is not set`); return v; };
const BASE = env('BASE'), SHOTS = env('SHOTS'), FIRST = env('FIRST'), SECOND = env('SECOND'), INVOYAGE = env('INVOYAGE');
const { chromium } = createRequire(join(env('PW_MODULES'), 'noop.js'))('playwright-core');
const WAIT = 120_000;

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (step, extra) => console.log(JSON.stringify({ step, ...extra }));
async function go(step) { say(step); const { value, done } = await lines.next(); if (done || value.trim() !== 'next') throw new Error(`expected "next" after ${step}, got ${value}`); }
function check(ok, what) { if (!ok) throw new Error(what); }
const shot = async (page, name) => { const path = join(SHOTS, name + '.png'); await page.screenshot({ path, fullPage: true }); say('screenshot', { path }); };

const profile = mkdtempSync(join(tmpdir(), 'dashboard-chromium-'));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: env('CHROMIUM'), headless: true, viewport: { width: 1280, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  page.on('pageerror', e => say('pageerror', { message: String(e) }));
  page.setDefaultTimeout(WAIT);

  // Both missions queued outside a voyage are listed, with their state and why they wait;
  // the voyage's own mission is not.
  await page.goto(BASE + '/#/voyages');
  const row = id => page.locator(`#loose tr[data-mission="${id}"]`);
  await row(FIRST).waitFor();
  await row(SECOND).waitFor();
  check(await page.locator(`#loose tr[data-mission="${INVOYAGE}"]`).count() === 0, 'a voyage mission is listed outside a voyage');
  check(await row(SECOND).locator('.state').innerText() === 'pending', 'the second is pending');
  const why = await row(SECOND).locator('ul.why').innerText();
  check(why.includes('waiting for hard dependency ' + FIRST), `why the second waits: ${why}`);
  await page.evaluate(() => { window.__sameDocument = true; });
  await shot(page, 'loose-missions');

  // The first starts: its row says so without a reload.
  await go('listed');
  await page.waitForSelector(`#loose tr[data-mission="${FIRST}"] .state[data-state=running]`);
  check(await page.evaluate(() => window.__sameDocument === true), 'the page was reloaded');

  // A click on its title opens its page.
  await row(FIRST).locator('a').click();
  await page.waitForSelector(`h2:has-text("add a health endpoint")`);
  check(page.url().endsWith('#/mission/' + FIRST), `the mission page: ${page.url()}`);
  say('done');
} catch (e) {
  const page = ctx.pages()[0];
  if (page) {
    await shot(page, 'failure').catch(() => {});
    say('failure', { page: await page.locator('main').innerText().catch(() => '') });
  }
  throw e;
} finally {
  await ctx.close();
  rmSync(profile, { recursive: true, force: true });
}
