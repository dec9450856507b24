// The voyage graph: missions as nodes coloured by state (fill) and landing (border), edges by
// kind, laid out by dagre (vendored, see web/package.json). Ordering edges (hard, soft,
// serialization, review) decide the layout; conflict edges (live and ended) and the other
// subject edges order nothing, so they are drawn between the placed nodes without moving them.
import dagre from './vendor/dagre.esm.js';
import { shown } from './shown.js';

const SVG = 'http://www.w3.org/2000/svg';
const NODE_W = 180, NODE_H = 44;

// edgeKind names an edge the way the legend does: a conflict edge the scheduler made from
// overlapping write areas is an inferred conflict.
export function edgeKind(e) {
  return e.type === 'conflict' && e.source === 'scheduler' ? 'inferred_conflict' : e.type;
}

function el(name, attrs, parent) {
  const n = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
  if (parent) parent.appendChild(n);
  return n;
}

function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + '…' : s; }

// renderGraph draws graph (the /api/voyages/{id} answer) and calls open(id) when a node is
// clicked. It returns the <svg>.
export function renderGraph(graph, open) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 24, ranksep: 70, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  const missions = graph.missions || [];
  const inVoyage = new Set(missions.map(m => m.id));
  for (const m of missions) g.setNode(m.id, { width: NODE_W, height: NODE_H, m });
  const edges = (graph.edges || []).map(e => ({ ...e, kind: edgeKind(e) }));
  // A mission made about another (review, repair, verify, debug) points from its subject; a
  // review also orders the layout (it comes after what it reviews), the others are drawn
  // between the placed nodes (a debug mission already runs before its subject: a hard edge).
  for (const s of graph.subjects || []) {
    edges.push({ mission_id: s.mission_id, depends_on: s.subject_id, type: 'subject', kind: s.kind === 'review' ? 'review' : 'subject',
      reason: `${s.kind} of ${s.subject_id}` });
  }
  // Conflicts that ended (one of their missions finished) stay drawn, faded.
  for (const e of graph.ended_conflicts || []) edges.push({ ...e, kind: edgeKind(e), ended: true });
  const ordering = e => e.type !== 'conflict' && e.kind !== 'subject';
  for (const e of edges) {
    for (const id of [e.mission_id, e.depends_on]) {
      if (!inVoyage.has(id) && !g.hasNode(id)) g.setNode(id, { width: NODE_W, height: NODE_H, external: true });
    }
    if (ordering(e)) g.setEdge(e.depends_on, e.mission_id, { kind: e.kind }, e.kind + ':' + e.depends_on + '>' + e.mission_id);
  }
  dagre.layout(g);
  const { width, height } = g.graph();
  const svg = el('svg', { class: 'graph', viewBox: `0 0 ${Math.max(width, 200)} ${Math.max(height, 80)}`,
    width: Math.max(width, 200), height: Math.max(height, 80), role: 'img', 'aria-label': 'voyage graph' });
  const defs = el('defs', {}, svg);
  const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, defs);
  el('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#444' }, marker);
  const edgeLayer = el('g', { class: 'edges' }, svg);
  for (const ref of g.edges()) {
    const pts = g.edge(ref).points;
    const d = 'M ' + pts.map(p => `${p.x} ${p.y}`).join(' L ');
    el('path', { class: 'edge', d, 'data-kind': g.edge(ref).kind, 'data-from': ref.v, 'data-to': ref.w, 'marker-end': 'url(#arrow)' }, edgeLayer);
  }
  for (const e of edges.filter(e => !ordering(e))) {
    const a = g.node(e.depends_on), b = g.node(e.mission_id);
    const mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2 - 30;
    const attrs = { class: 'edge', d: `M ${a.x} ${a.y} Q ${mx} ${my} ${b.x} ${b.y}`, 'data-kind': e.kind, 'data-from': e.depends_on, 'data-to': e.mission_id };
    if (e.ended) attrs['data-ended'] = '';
    if (e.kind === 'subject') attrs['marker-end'] = 'url(#arrow)';
    el('path', attrs, edgeLayer).appendChild(title((e.ended ? 'ended: ' : '') + (e.reason || e.kind)));
  }
  const nodeLayer = el('g', { class: 'nodes' }, svg);
  for (const id of g.nodes()) {
    const n = g.node(id);
    const m = n.m;
    const grp = el('g', { class: 'node', 'data-mission': id, transform: `translate(${n.x - NODE_W / 2},${n.y - NODE_H / 2})` }, nodeLayer);
    el('rect', { width: NODE_W, height: NODE_H, rx: 6 }, grp);
    if (m) {
      grp.setAttribute('data-state', m.state);
      grp.setAttribute('data-landing', m.landing);
      el('text', { x: 8, y: 17 }, grp).textContent = clip(shown(m.key || m.title), 24);
      el('text', { x: 8, y: 34, class: 'sub' }, grp).textContent = m.state + (m.landing && m.landing !== 'none' ? ' · ' + m.landing : '');
      grp.appendChild(title(`${m.title}\n${m.id}\n${m.state}, landing ${m.landing}` + (m.why ? '\n' + m.why.map(w => w.message).join('\n') : '')));
    } else {
      grp.setAttribute('data-external', '');
      el('text', { x: 8, y: 26 }, grp).textContent = clip(shown(id), 24);
    }
    grp.addEventListener('click', () => open(id));
  }
  return svg;
}

// title is a tooltip, its text shown as every text of the page is (shown.js).
function title(text) {
  const t = document.createElementNS(SVG, 'title');
  t.textContent = shown(text);
  return t;
}
