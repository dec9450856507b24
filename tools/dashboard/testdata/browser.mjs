// Drives the dashboard in a real Chromium (Debian's package) through playwright-core, for
// browser_test.go. Steps are synchronised with the Go test over stdio: this script prints
// one JSON line per step ({"step": …}) and, where the Go side must change state, waits for a
// line on stdin before going on. Every wait is for a condition, with a generous timeout.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const env = name => { const v = process.env[name]; if (!v) throw new Error(`${name} is not set`); return v; };
const BASE = env('BASE'), TOKEN = env('TOKEN'), VOYAGE = env('VOYAGE'), SHOTS = env('SHOTS');
const IDS = JSON.parse(env('IDS'));
const STATES = JSON.parse(env('STATES'));
const { chromium, request } = createRequire(join(env('PW_MODULES'), 'noop.js'))('playwright-core');
const WAIT = 120_000;

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (step, extra) => console.log(JSON.stringify({ step, ...extra }));
async function go(step) { say(step); const { value, done } = await lines.next(); if (done || value.trim() !== 'next') throw new Error(`expected "next" after ${step}, got ${value}`); }
function check(ok, what) { if (!ok) throw new Error(what); }
const shot = async (page, name) => { const path = join(SHOTS, name + '.png'); await page.screenshot({ path, fullPage: true }); say('screenshot', { path }); };

// Refusals, from a plain HTTP client: no token, a wrong cookie, a foreign Origin.
const raw = await request.newContext();
let r = await raw.get(BASE + '/api/overview');
check(r.status() === 401, `no token: status ${r.status()}`);
r = await raw.get(BASE + '/api/voyages/' + VOYAGE, { headers: { Cookie: 'mcp_scheduler_session=' + TOKEN } });
check(r.status() === 401, `the raw token as a cookie: status ${r.status()}`);
r = await raw.post(BASE + '/api/missions/' + IDS.a + '/retry', { headers: { Origin: 'https://evil.example', Authorization: 'Bearer ' + TOKEN, 'Content-Type': 'application/json' }, data: '{}' });
check(r.status() === 403, `foreign Origin: status ${r.status()}`);
await raw.dispose();
say('refused');

const profile = mkdtempSync(join(tmpdir(), 'dashboard-chromium-'));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: env('CHROMIUM'), headless: true, viewport: { width: 1280, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const foreign = [];
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  page.on('request', req => { if (!req.url().startsWith(BASE) && !req.url().startsWith('data:')) foreign.push(req.url()); });
  page.on('pageerror', e => say('pageerror', { message: String(e) }));
  page.setDefaultTimeout(WAIT);

  // Login: a page load without the cookie lands on the login page; a wrong token is refused.
  await page.goto(BASE + '/#/voyage/' + VOYAGE);
  check(new URL(page.url()).pathname === '/login', `without a session the page is ${page.url()}`);
  await page.fill('input[name=token]', 'wrong');
  await page.click('button[type=submit]');
  await page.waitForSelector('.problem');
  await shot(page, 'login');
  await page.fill('input[name=token]', TOKEN);
  await Promise.all([page.waitForURL(u => new URL(u).pathname === '/'), page.click('button[type=submit]')]);
  const cookies = await ctx.cookies(BASE);
  const c = cookies.find(c => c.name === 'mcp_scheduler_session');
  check(c && c.httpOnly && c.sameSite === 'Strict' && !c.value.includes(TOKEN), `session cookie ${JSON.stringify(c)}`);
  await page.waitForSelector(`tr[data-voyage="${VOYAGE}"]`);
  // This server runs no scheduler loop (the test plays the agent): the header says so, in
  // the words of `status` and `watch`.
  const idle = page.locator('#loop-idle');
  await idle.waitFor();
  check((await idle.getAttribute('title')).includes('nothing is launched or landed until `mcp-scheduler daemon`'), `no-leader line: ${await idle.getAttribute('title')}`);
  await shot(page, 'voyages');

  // The graph shows every mission with its state.
  await page.goto(BASE + '/#/voyage/' + VOYAGE);
  for (const [key, id] of Object.entries(IDS)) await page.waitForSelector(`g.node[data-mission="${id}"][data-state="${STATES[key]}"]`);
  const nodes = await page.locator('g.node[data-state]').count();
  check(nodes === Object.keys(IDS).length, `${nodes} mission nodes`);
  const kinds = await page.locator('path.edge').evaluateAll(es => es.map(e => e.dataset.kind).sort());
  check(JSON.stringify(kinds) === JSON.stringify(['hard', 'inferred_conflict', 'serialization', 'soft']), `edge kinds ${kinds}`);
  await page.waitForSelector('#live[data-state=live]');
  await shot(page, 'voyage-graph');
  await page.evaluate(() => { window.__sameDocument = true; });

  // A state change reaches the page without a reload.
  await go('graph');
  await page.waitForSelector(`g.node[data-mission="${IDS.a}"][data-state="running"]`);
  check(await page.evaluate(() => window.__sameDocument === true), 'the page was reloaded');
  say('live');

  // Clicking a node opens the mission.
  await page.click(`g.node[data-mission="${IDS.a}"]`);
  await page.waitForSelector(`section[data-mission="${IDS.a}"][data-state="running"]`);
  await shot(page, 'mission');

  // Resolving an escalation from the page moves the mission on.
  await go('mission');
  await page.goto(BASE + '/#/escalations');
  const card = page.locator('.card[data-escalation][data-state=open]');
  await card.first().waitFor();
  const named = await card.first().locator(`a[href="#/mission/${IDS.a}"]`).count();
  check(named === 1, `the escalation links its mission ${named} times`);
  await shot(page, 'escalations');
  const escID = await card.first().getAttribute('data-escalation');
  await card.first().locator('button[data-action=retry]').click();
  await page.waitForSelector(`#notice.ok:has-text("Escalation ${escID} resolved with retry.")`);
  await page.waitForSelector('.card[data-escalation]', { state: 'detached' });
  await page.goto(BASE + '/#/mission/' + IDS.a);
  await page.waitForSelector(`section[data-mission="${IDS.a}"][data-state="pending"]`);
  await go('resolved');

  // A failed attempt reads as its kind and summary, on the mission page and in its attempts.
  await page.goto(BASE + '/#/mission/' + IDS.a);
  await page.waitForSelector(`section[data-mission="${IDS.a}"]:has-text("test: 3 tests failed in outline_test.go")`);
  const text = await page.locator(`section[data-mission="${IDS.a}"]`).innerText();
  check(!text.includes('undefined'), `the mission page shows "undefined": ${text}`);

  await page.goto(BASE + '/#/agents');
  await page.waitForSelector(`tr[data-mission="${IDS.c}"]`);
  await shot(page, 'agents');
  // The header counts the same groups as the voyage's badges (the only voyage: they agree).
  await page.goto(BASE + '/#/voyage/' + VOYAGE);
  await page.waitForSelector(`g.node[data-mission="${IDS.c}"][data-state="running"]`);
  await page.waitForFunction(() => {
    const t = sel => [...document.querySelectorAll(sel)].map(b => b.textContent).join('|');
    return t('#voyage-badges .badge') !== '' && t('#summary .badge') === t('#voyage-badges .badge');
  });
  const badges = await page.locator('#voyage-badges .badge').allInnerTexts();
  check(badges.includes('1 running') && badges.includes('3 waiting'), `voyage badges ${badges}`);

  // A review mission is linked to what it reviews; the conflict of c and d stays drawn
  // (faded) after c completes and the store drops it.
  await go('edges');
  await page.waitForSelector(`path.edge[data-kind=review][data-from="${IDS.b}"]`, { state: 'attached' });
  await page.waitForSelector('path.edge[data-kind=inferred_conflict][data-ended]', { state: 'attached' });
  check(await page.locator('path.edge[data-kind=inferred_conflict]:not([data-ended])').count() === 0, 'the live conflict is gone');
  check(await page.locator('.legend .review').count() === 1 && await page.locator('.legend .ended').count() === 1, 'the legend names the new kinds');
  await shot(page, 'voyage-edges');
  check(foreign.length === 0, `requests to other hosts: ${foreign}`);
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
