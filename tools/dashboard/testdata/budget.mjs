// Raises a spent budget from the dashboard in a real Chromium (Debian's package) through
// playwright-core, for TestBrowser_RaiseBudget. Steps are synchronised with the Go test as in
// browser.mjs: one JSON line per step, and a line "next" on stdin where the Go side acts.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const env = name => { const v = process.env[name]; if (!v) throw new Error(`${name} is not set`); return v; };
const BASE = env('BASE'), TOKEN = env('TOKEN'), MISSION = env('MISSION'), EVIL = env('EVIL'), SHOTS = env('SHOTS');
const { chromium } = createRequire(join(env('PW_MODULES'), 'noop.js'))('playwright-core');
const WAIT = 240_000;

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

  // Log in: the browser now holds the session cookie.
  await page.goto(BASE + '/login');
  await page.fill('input[name=token]', TOKEN);
  await Promise.all([page.waitForURL(u => new URL(u).pathname === '/'), page.click('button[type=submit]')]);

  // Another site's page posts to the budget endpoint, as a form and as a script: the
  // SameSite=Strict cookie stays home and the Origin is not this server's, so both are refused.
  const evil = await ctx.newPage();
  await evil.goto(EVIL);
  const scripted = await evil.evaluate(async url => {
    try {
      const r = await fetch(url, { method: 'POST', credentials: 'include', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: '{"cost_limit_usd":100}' });
      return r.type;
    } catch (e) { return String(e); }
  }, `${BASE}/api/missions/${MISSION}/budget`);
  await Promise.all([evil.waitForNavigation(), evil.click('#raise')]);
  const answer = await evil.locator('body').innerText();
  check(answer.includes('unauthorized') || answer.includes('forbidden'), `the cross-site form post was answered: ${answer}`);
  await evil.close();
  await go('crosssite'); // the Go side checks that the limit did not change
  say('scripted', { answer: scripted });

  // The mission page shows the spend and the limit and the form.
  await page.goto(BASE + '/#/mission/' + MISSION);
  const form = page.locator('form[data-budget=mission]');
  await form.waitFor();
  check(await form.locator('[data-spent=cost]').innerText() === '$0.5000', 'the spend shown');
  check(await form.locator('[data-limit=cost]').innerText() === '$0.2500', 'the limit shown');
  check(await page.locator('form[data-budget=voyage]').count() === 1, 'the voyage budget is offered too');
  // The escalation says raising the limit resumes the mission, and names the page's form,
  // not the MCP tool, as the failure and the attempts do.
  const steps = await page.locator('.card[data-escalation][data-state=open] [data-next-step]').allInnerTexts();
  check(steps.some(s => s.includes('resumes by itself once the limit is raised')), `safe next steps: ${steps}`);
  check(!steps.some(s => /resolve_escalation|get_mission|voyage_status|retry_mission/.test(s)), `safe next steps name tools: ${steps}`);
  const main = await page.locator('main').innerText();
  check(main.includes("the mission page's budget form"), `the page names its form: ${main}`);
  check(!/update_mission|update_voyage|cost_limit_usd\)/.test(main), `the page names tools: ${main}`);
  // A scheduler loop leads here: once the header is drawn, it does not say that none does.
  await page.locator('#summary .badge').first().waitFor();
  check(await page.locator('#loop-idle').count() === 0, 'the header says no loop leads while one does');
  await shot(page, 'budget');

  // A negative limit is refused with the engine's sentence, and changes nothing.
  await form.locator('input[name=cost_limit_usd]').fill('-1');
  await form.locator('button[data-action=set-budget]').click();
  await page.waitForSelector('#notice:not([hidden]):has-text("negative")');
  await go('refused');

  // A new limit resumes the mission, which completes.
  await form.locator('input[name=cost_limit_usd]').fill('5');
  await form.locator('button[data-action=set-budget]').click();
  await page.waitForSelector(`section[data-mission="${MISSION}"][data-state="completed"]`);
  check(await page.locator('form[data-budget]').count() === 0, 'the budget form is gone once nothing holds the mission');
  // It lands: the landings table names its columns and shows the result on the target branch.
  await page.waitForSelector('#landings tr:has(td:text-is("landed")):has(td:text-is("main"))');
  const heads = await page.locator('#landings th').allInnerTexts();
  check(JSON.stringify(heads) === JSON.stringify(['attempt', 'result', 'onto', 'commit', 'at', 'detail']), `landing columns: ${heads}`);
  await shot(page, 'budget-raised');

  // The agents page counts what the profile spent today on both attempts (both ended).
  await page.goto(BASE + '/#/agents');
  await page.waitForSelector('#spend tr[data-profile=ref] td[data-cost]:has-text("$1.0000")');
  check(await page.locator('#cost-today').innerText() === '$1.0000', 'the cost so far today');
  await shot(page, 'agents-spend');
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
