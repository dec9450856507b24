// The mission page shows hidden characters as escapes in a real Chromium (Debian's package)
// through playwright-core, for TestBrowser_ShowsHiddenCharactersAsEscapes. One JSON line per
// step, as in browser.mjs; the Go test does not act in between.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const env = name => { const v = process.env[name]; if (!v) throw new Error(`${name} is not set`); return v; };
const BASE = env('BASE'), SHOTS = env('SHOTS'), MISSION = env('MISSION'), TITLE = env('TITLE'), PROGRESS = env('PROGRESS');
const { chromium } = createRequire(join(env('PW_MODULES'), 'noop.js'))('playwright-core');
const WAIT = 120_000;

const say = (step, extra) => console.log(JSON.stringify({ step, ...extra }));
function check(ok, what) { if (!ok) throw new Error(what); }
const shot = async (page, name) => { const path = join(SHOTS, name + '.png'); await page.screenshot({ path, fullPage: true }); say('screenshot', { path }); };
// hidden finds a character the page must never show as itself: a control, a bidirectional
// control or a zero-width character (the escapes stand in for them).
const hidden = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/u;

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

  await page.goto(BASE + '/#/mission/' + MISSION);
  await page.waitForSelector(`section[data-mission="${MISSION}"]`);
  const title = await page.locator('h2').first().innerText();
  check(title.startsWith(TITLE), `the title reads ${JSON.stringify(title)}, not ${JSON.stringify(TITLE)}`);
  const main = await page.locator('main').innerText();
  check(main.includes(PROGRESS), `the progress is not shown as ${JSON.stringify(PROGRESS)}: ${JSON.stringify(main)}`);
  check(!hidden.test(main), `the page shows a hidden character itself: ${JSON.stringify(main)}`);

  // The voyages page lists the mission (outside a voyage) by its title, escaped as well.
  await page.goto(BASE + '/#/voyages');
  const row = page.locator(`#loose tr[data-mission="${MISSION}"] a`);
  await row.waitFor();
  check(await row.innerText() === TITLE, `the listed title reads ${JSON.stringify(await row.innerText())}`);
  await shot(page, 'hidden-text');
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
