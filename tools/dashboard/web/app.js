// The dashboard's pages: plain JavaScript modules, no build step (docs/dashboard.md). Each
// page reads the JSON API and renders with DOM calls (text is always set as text, never as
// HTML, and shown as the command line shows it: shown.js). Live updates come from the
// server-sent event stream /api/events: on each change the current page is read again;
// nothing polls.
import { renderGraph } from './graph.js';
import { shown } from './shown.js';

const page = document.getElementById('page');

// h builds an element: h('td', {class: 'x'}, 'text', child, …). Every text it is given, and
// a title attribute (a tooltip), is shown through shown(): the one place text reaches the page.
function h(tag, attrs, ...kids) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) n.addEventListener(k.slice(2), v); else n.setAttribute(k, v === true ? '' : k === 'title' ? shown(v) : String(v));
  }
  for (const k of kids.flat(Infinity)) if (k !== undefined && k !== null && k !== false) n.append(k instanceof Node ? k : shown(k));
  return n;
}

const state = s => h('span', { class: 'state', 'data-state': s }, s);
// badgeList shows mission counts by group (the API's badges): the header and every voyage
// page draw theirs with it, from the same groups.
const badgeList = bs => (bs || []).map(b => h('span', { class: 'badge', 'data-badge': b.key, title: b.states.join(', ') }, `${b.count} ${b.key}`));
const link = (href, text) => h('a', { href }, text);
const missionLink = (id, text) => link('#/mission/' + id, text || id);
const when = t => t && !t.startsWith('0001') ? new Date(t).toLocaleString() : '';
const usd = n => n ? '$' + n.toFixed(4) : '';
const tokens = u => u && (u.input_tokens || u.output_tokens) ? `${u.input_tokens || 0} in / ${u.output_tokens || 0} out` : '';

async function api(path, opts) {
  const r = await fetch(path, { credentials: 'same-origin', ...opts });
  if (r.status === 401) { location.href = '/login'; throw new Error('log in first'); }
  const body = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
  if (!r.ok) throw new Error(body.error || `HTTP ${r.status}`);
  return body;
}

// act runs an action and shows its answer (done, what it did: "escalation esc_… resolved
// with retry"); the page itself updates from the change event.
async function act(path, body, done) {
  try {
    await api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body || {}) });
    notice(done || 'Done: ' + path.split('/').slice(-1)[0].replace('-', ' '), true);
  } catch (e) {
    notice(e.message, false);
  }
}

function notice(text, ok) {
  const n = document.getElementById('notice');
  n.textContent = shown(text);
  n.className = ok ? 'ok' : '';
  n.hidden = false;
}

// whyList lists the reasons a mission waits; words are the same reasons in the page's words
// (page_why_not_running, in the same order), when the API gave them.
function whyList(why, words) {
  if (!why || !why.length) return null;
  return h('ul', { class: 'why' }, why.map((w, i) => h('li', { 'data-code': w.code }, (words && words[i]) || w.message, w.until ? ` (until ${when(w.until)})` : '')));
}

// failureText is how a failure reads (engine/domain Failure: kind, summary, diagnostic, tool);
// summary is its summary in the page's words (page_last_failure, page_attempt_failures), if any.
function failureText(f, summary) {
  const what = summary || f.summary || f.diagnostic || '';
  const tool = f.tool ? ` (${f.tool})` : '';
  return what ? `${f.kind}: ${what}${tool}` : `${f.kind}${tool}`;
}

// legend names the graph's edge kinds (graph.js draws them; style.css styles both alike).
const legend = [['hard', 'hard'], ['soft', 'soft'], ['serialization', 'serialization'], ['conflict', 'conflict'],
  ['inferred_conflict', 'inferred conflict'], ['ended', 'conflict that ended'], ['review', 'review of'], ['subject', 'repair / verify / debug of']];

// looseMissions lists the unfinished missions that belong to no voyage (mcp-scheduler go
// queues one at a time), with why each waits, as a voyage page lists its own.
function looseMissions(l) {
  const ms = (l && l.missions) || [];
  if (!ms.length) return null;
  return [h('h3', {}, 'Missions outside a voyage'),
    h('table', { id: 'loose' }, h('tr', {}, h('th', {}, 'mission'), h('th', {}, 'state'), h('th', {}, 'why it waits')),
      ms.map(m => h('tr', { 'data-mission': m.id }, h('td', {}, missionLink(m.id, m.title || m.id)), h('td', {}, state(m.state)), h('td', {}, whyList(m.why))))),
    l.more ? h('p', { class: 'muted' }, `The first ${ms.length} are shown (oldest first); mcp-scheduler missions list shows them all.`) : null];
}

// Pages: each returns the node to show.
const pages = {
  async voyages() {
    const [o, loose] = await Promise.all([api('/api/overview'), api('/api/missions')]);
    const rows = (o.voyages || []).map(v => h('tr', { 'data-voyage': v.id },
      h('td', {}, link('#/voyage/' + v.id, v.title || v.id)), h('td', {}, v.state), h('td', { class: 'muted' }, v.id), h('td', {}, when(v.created_at))));
    return h('section', {}, h('h2', {}, 'Voyages'),
      rows.length ? h('table', {}, h('tr', {}, h('th', {}, 'voyage'), h('th', {}, 'state'), h('th', {}, 'id'), h('th', {}, 'created')), rows)
        : h('p', { class: 'muted' }, 'No voyages yet: dispatch one (the dispatch tool, or mcp-scheduler demo).'),
      looseMissions(loose));
  },

  async voyage(id) {
    const g = await api('/api/voyages/' + encodeURIComponent(id));
    g.missions = g.missions || [];
    const waiting = g.missions.filter(m => m.why && m.why.length);
    return h('section', { 'data-voyage': g.voyage.id },
      h('h2', {}, g.voyage.title || g.voyage.id, ' ', h('span', { class: 'muted', id: 'voyage-state' }, g.voyage.state)),
      h('p', { id: 'voyage-badges' }, badgeList(g.badges)),
      h('div', { class: 'legend' }, legend.map(([k, text]) => h('span', { class: k }, text))),
      g.budget ? budgetForm(g.budget) : null,
      renderGraph(g, mid => { location.hash = '#/mission/' + mid; }),
      waiting.length ? [h('h3', {}, 'Waiting'), h('table', {}, waiting.map(m => h('tr', {}, h('td', {}, missionLink(m.id, m.key || m.title)), h('td', {}, whyList(m.why)))))] : null,
      g.escalations && g.escalations.length ? [h('h3', {}, 'Open escalations'), g.escalations.map(escCard)] : null);
  },

  async mission(id) {
    const enc = encodeURIComponent(id);
    const [d, log, diff] = await Promise.all([api('/api/missions/' + enc), api(`/api/missions/${enc}/log`), api(`/api/missions/${enc}/diff`)]);
    const m = d.mission;
    const field = (k, v) => v || v === 0 ? h('tr', {}, h('th', {}, k), h('td', {}, v)) : null;
    return h('section', { 'data-mission': m.id, 'data-state': m.state },
      h('h2', {}, m.title, ' ', state(m.state)),
      m.voyage_id ? h('p', {}, 'Voyage ', link('#/voyage/' + m.voyage_id, m.voyage_id)) : null,
      h('table', {}, field('id', m.id), field('key', m.key), field('kind', m.kind), field('landing', m.landing), field('priority', m.priority),
        field('repository', m.repository), field('target branch', m.target_branch), field('persona', m.persona),
        field('write area', (m.write_area || []).join(', ')), field('attempt', `${m.attempt} (budget ${m.retry_budget}, used ${m.attempts_used})`),
        field('agent', m.profile), field(m.state === 'running' ? 'progress' : 'last progress', m.progress && m.progress.message), field('usage', tokens(m.usage)), field('cost', usd(m.usage && m.usage.cost_usd)),
        field('result', m.result && m.result.summary), field('last failure', m.last_failure && failureText(m.last_failure, d.page_last_failure))),
      h('div', { class: 'buttons' },
        (d.actions || []).includes('retry') ? h('button', { 'data-action': 'retry', onclick: () => act(`/api/missions/${enc}/retry`) }, 'Retry') : null,
        (d.actions || []).includes('skip') ? h('button', { 'data-action': 'skip', onclick: () => act(`/api/missions/${enc}/skip`, { note: 'skipped from the dashboard' }) }, 'Skip') : null,
        (d.actions || []).includes('approve_landing') ? h('button', { 'data-action': 'approve_landing', onclick: () => act(`/api/missions/${enc}/approve-landing`) }, 'Approve landing') : null),
      d.why_not_running ? [h('h3', {}, 'Why it waits'), whyList(d.why_not_running, d.page_why_not_running)] : null,
      (d.budgets || []).length ? [h('h3', {}, 'Budget'), d.budgets.map(budgetForm)] : null,
      h('h3', {}, 'Dependencies'),
      (d.depends_on || []).length ? h('ul', {}, d.depends_on.map(e => h('li', {}, e.type, ' on ', missionLink(e.depends_on), e.reason ? ` (${e.reason})` : ''))) : h('p', { class: 'muted' }, 'none'),
      h('h3', {}, 'Attempts'),
      (d.attempts || []).length ? h('table', {}, h('tr', {}, ['#', 'agent', 'outcome', 'failure', 'usage', 'cost', 'started', 'ended'].map(t => h('th', {}, t))),
        d.attempts.map(a => h('tr', { 'data-attempt': a.attempt }, h('td', {}, a.attempt), h('td', {}, a.agent || a.profile || ''), h('td', {}, a.outcome),
          h('td', {}, a.failure ? failureText(a.failure, (d.page_attempt_failures || {})[a.attempt]) : ''), h('td', {}, tokens(a.usage)), h('td', {}, usd(a.usage && a.usage.cost_usd)),
          h('td', {}, when(a.started_at)), h('td', {}, when(a.ended_at))))) : h('p', { class: 'muted' }, m.attempt ? `attempt ${m.attempt} has not ended yet` : 'none yet'),
      h('h3', {}, `Output (attempt ${log.attempt || '–'})`),
      log.log ? h('pre', { id: 'log' }, (log.log.truncated ? '…\n' : '') + (log.readable || []).join('\n') + (log.log.stderr ? '\n--- stderr ---\n' + log.log.stderr : ''))
        : h('p', { class: 'muted' }, log.unavailable),
      h('h3', {}, 'Diff'),
      diff.diff && diff.diff.patch ? [h('ul', {}, (diff.diff.files || []).map(f => h('li', {}, f.action, ' ', f.path))), h('pre', { id: 'diff' }, diff.diff.patch)]
        : h('p', { class: 'muted' }, diff.unavailable || 'No changes.'),
      h('h3', {}, 'Landings'),
      (d.landings || []).length ? h('table', { id: 'landings' }, h('tr', {}, ['attempt', 'result', 'onto', 'commit', 'at', 'detail'].map(t => h('th', {}, t))),
        d.landings.map(l => h('tr', {}, h('td', {}, `attempt ${l.attempt}`), h('td', {}, l.status), h('td', {}, l.target_branch || ''),
          h('td', {}, (l.commit || '').slice(0, 12)), h('td', {}, when(l.at)), h('td', {}, l.detail || '')))) : h('p', { class: 'muted' }, 'none'),
      h('h3', {}, 'Escalations'),
      (d.escalations || []).length ? d.escalations.map(escCard) : h('p', { class: 'muted' }, 'none'));
  },

  async escalations() {
    const escs = (await api('/api/escalations')) || [];
    return h('section', {}, h('h2', {}, 'Open escalations'),
      escs.length ? escs.map(escCard) : h('p', { class: 'muted' }, 'Nothing waits for a decision.'));
  },

  async agents() {
    const p = await api('/api/agents');
    for (const k of ['agents', 'running', 'landing', 'spend']) p[k] = p[k] || [];
    return h('section', {},
      h('h2', {}, 'Agents'),
      p.agents.length ? h('table', {}, h('tr', {}, ['agent', 'kind', 'profile', 'running', 'last seen'].map(t => h('th', {}, t))),
        p.agents.map(a => h('tr', {}, h('td', {}, a.id), h('td', {}, a.kind), h('td', {}, a.profile || ''), h('td', {}, a.running), h('td', {}, when(a.last_seen))))) : h('p', { class: 'muted' }, 'No agent seen yet.'),
      h('h2', {}, 'Running'),
      p.running.length ? h('table', {}, h('tr', {}, ['mission', 'state', 'agent', 'attempt', 'progress', 'usage', 'cost'].map(t => h('th', {}, t))),
        p.running.map(m => h('tr', { 'data-mission': m.id }, h('td', {}, missionLink(m.id, m.key || m.title)), h('td', {}, state(m.state)), h('td', {}, m.lease && m.lease.owner || m.profile || ''),
          h('td', {}, m.attempt), h('td', {}, m.progress && m.progress.message || ''), h('td', {}, tokens(m.usage)), h('td', {}, usd(m.usage && m.usage.cost_usd))))) : h('p', { class: 'muted' }, 'Nothing runs.'),
      h('h2', {}, 'Landing queue'),
      p.landing.length ? h('table', {}, h('tr', {}, ['mission', 'landing', 'why it waits'].map(t => h('th', {}, t))),
        p.landing.map(l => h('tr', { 'data-mission': l.mission.id }, h('td', {}, missionLink(l.mission.id, l.mission.key || l.mission.title)), h('td', {}, l.mission.landing), h('td', {}, whyList(l.why))))) : h('p', { class: 'muted' }, 'Nothing waits to land.'),
      h('h2', {}, 'Spend today', p.spend.length ? ` (${p.spend[0].day})` : ''),
      p.spend.length ? h('table', { id: 'spend' }, h('tr', {}, ['profile', 'ended today', 'in flight', 'cost today', 'tokens today'].map(t => h('th', {}, t))),
        p.spend.map(s => h('tr', { 'data-profile': s.profile }, h('td', {}, s.profile || '(none)'), h('td', {}, usd(s.ended.cost_usd) || '$0'),
          h('td', {}, usd(s.in_flight.cost_usd) || '$0'), h('td', { 'data-cost': '' }, usd((s.ended.cost_usd || 0) + (s.in_flight.cost_usd || 0)) || '$0'),
          h('td', {}, tokens({ input_tokens: (s.ended.input_tokens || 0) + (s.in_flight.input_tokens || 0), output_tokens: (s.ended.output_tokens || 0) + (s.in_flight.output_tokens || 0) }))))) : null,
      h('p', {}, 'Cost so far today, ended and in flight: ', h('strong', { id: 'cost-today' }, usd(p.cost_usd) || '$0')));
  },
};

// budgetForm shows a held mission's or voyage's spend and limits (b: the API's BudgetView)
// with a form that sets new limits: POST /api/{missions|voyages}/ID/budget with the fields
// filled in (an empty field stays as it is). A refusal shows the engine's sentence.
function budgetForm(b) {
  const path = `/api/${b.scope}s/${encodeURIComponent(b.id)}/budget`;
  const input = (name, step) => h('input', { type: 'number', name, step, 'data-keep': `${b.scope}:${b.id}:${name}` });
  const cost = input('cost_limit_usd', 'any'), tok = input('token_limit', '1');
  const submit = ev => {
    ev.preventDefault();
    const body = {};
    if (cost.value !== '') body.cost_limit_usd = Number(cost.value);
    if (tok.value !== '') body.token_limit = Number(tok.value);
    act(path, body);
  };
  const limit = (n, show) => n ? show(n) : 'no limit';
  return h('form', { class: 'card budget', 'data-budget': b.scope, 'data-id': b.id, onsubmit: submit },
    h('strong', {}, `The ${b.scope}'s budget`),
    h('p', {}, 'Cost: spent ', h('span', { 'data-spent': 'cost' }, usd(b.spent_usd) || '$0'), ' of ', h('span', { 'data-limit': 'cost' }, limit(b.cost_limit_usd, usd)),
      ' · tokens: spent ', h('span', { 'data-spent': 'tokens' }, b.spent_tokens || 0), ' of ', h('span', { 'data-limit': 'tokens' }, limit(b.token_limit, String))),
    h('label', {}, 'New cost limit (USD) ', cost), ' ', h('label', {}, 'New token limit ', tok), ' ',
    h('button', { type: 'submit', 'data-action': 'set-budget' }, 'Set limits'),
    h('p', { class: 'muted' }, '0 removes a limit; a field left empty stays as it is.'));
}

function escCard(e) {
  const enc = encodeURIComponent(e.id);
  const resolve = action => () => act(`/api/escalations/${enc}/resolve`, { action, note: `${action} from the dashboard` },
    `Escalation ${e.id} resolved with ${action}.`);
  return h('div', { class: 'card', 'data-escalation': e.id, 'data-state': e.state },
    h('strong', {}, e.kind, ': '), e.page_reason || e.reason,
    h('p', {}, h('em', {}, 'Decision: '), e.page_decision || e.decision_required),
    e.safe_next_step ? h('p', { 'data-next-step': '' }, h('em', {}, 'Safe next step: '), e.page_next_step || e.safe_next_step) : null,
    (e.evidence || []).length ? h('ul', {}, e.evidence.map((x, i) => h('li', {}, (e.page_evidence || [])[i] || x))) : null,
    h('p', { class: 'muted' }, 'missions: ', (e.mission_ids || []).map(id => [missionLink(id), ' ']), e.state === 'resolved' ? ` · resolved (${e.resolution}) by ${e.resolved_by}` : ''),
    e.state === 'open' ? h('div', { class: 'buttons' },
      ['retry', 'skip', 'cancel', 'acknowledge'].map(a => h('button', { 'data-action': a, onclick: resolve(a) }, a)),
      e.kind === 'review' || e.kind === 'checkout' ? (e.mission_ids || []).map(id => h('button', { 'data-action': 'approve-landing', onclick: () => act(`/api/missions/${encodeURIComponent(id)}/approve-landing`) }, 'approve landing')) : null) : null);
}

// route reads the hash: #/voyages, #/voyage/ID, #/mission/ID, #/escalations, #/agents.
function route() {
  const [name, id] = (location.hash.replace(/^#\/?/, '') || 'voyages').split('/');
  return pages[name] ? { name, id } : { name: 'voyages' };
}

let rendering = null, again = false;

// render reads and draws the current page; a render asked for while one runs is done once
// after it (changes coalesce, none is lost).
async function render() {
  if (rendering) { again = true; return rendering; }
  rendering = (async () => {
    do {
      again = false;
      const r = route();
      document.querySelectorAll('header nav a').forEach(a => a.classList.toggle('current', a.dataset.nav === r.name || (a.dataset.nav === 'voyages' && r.name === 'voyage')));
      try {
        const node = await pages[r.name](r.id ? decodeURIComponent(r.id) : undefined);
        keepInputs(node);
        page.replaceChildren(node);
        document.body.dataset.page = r.name;
        document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
      } catch (e) {
        page.replaceChildren(h('p', { class: 'problem' }, e.message));
      }
      await header();
    } while (again);
  })();
  try { await rendering; } finally { rendering = null; }
}

// keepInputs carries what a person typed into the page's fields (data-keep) over to the page
// drawn again on a change, so a live update never loses it.
function keepInputs(node) {
  for (const old of page.querySelectorAll('input[data-keep]')) {
    const now = node.querySelector(`input[data-keep="${CSS.escape(old.dataset.keep)}"]`);
    if (now && old.value !== '') now.value = old.value;
  }
}

async function header() {
  try {
    const o = await api('/api/overview');
    document.getElementById('summary').replaceChildren(...badgeList(o.badges), o.status.paused ? h('span', { class: 'badge paused' }, 'PAUSED') : '',
      o.loop_idle ? h('span', { id: 'loop-idle', title: o.loop_idle }, 'NO SCHEDULER LEADS') : '');
    document.getElementById('esc-count').textContent = o.status.open_escalations ? `(${o.status.open_escalations})` : '';
    document.getElementById('logout').hidden = !o.login;
  } catch { /* the page shows the error */ }
}

function live() {
  const ind = document.getElementById('live');
  const es = new EventSource('/api/events');
  es.addEventListener('ready', () => { ind.dataset.state = 'live'; ind.textContent = 'live'; render(); });
  es.addEventListener('change', () => render());
  es.onerror = () => { ind.dataset.state = 'down'; ind.textContent = 'reconnecting…'; };
}

window.addEventListener('hashchange', () => { document.getElementById('notice').hidden = true; render(); });
live();
render();
