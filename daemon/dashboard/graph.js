// The blockedBy graph as an SVG layered DAG: each task that takes part in a dependency is a box
// in the column of its longest chain of blockers; arrows run from blocker to blocked task. Past
// MAX_NODES it draws the first ones by id and says so (`data-shown`, `data-total`), or, focused on
// a task, that task's neighbourhood: what it waits on and what waits on it, a few steps out.

import { compareIds } from './deps.js';
import { s } from './dom.js';

const MAX_NODES = 150;
const NODE_W = 132;
const NODE_H = 38;
const GAP_X = 64;
const GAP_Y = 14;
const PAD = 12;
const FOCUS_STEPS = 3;

/**
 * An `<svg>` of the tasks in `tasks` (id → task) that block or are blocked, or null when no task
 * has a dependency. `info` is `analyse(tasks)`; `onPick(id)` runs when a box is clicked.
 */
export function dependencyGraph(tasks, info, onPick, focus = null) {
  let ids = [...tasks.keys()].filter((id) => info.get(id).blocks.length > 0 || tasks.get(id).blockedBy.length > 0);
  if (ids.length === 0) return null;
  const total = ids.length;
  if (focus && tasks.has(focus)) ids = neighbourhood(tasks, info, focus);
  ids.sort(compareIds);
  const truncated = ids.length > MAX_NODES;
  if (truncated) ids = ids.slice(0, MAX_NODES);
  const shown = new Set(ids);

  // Layer = the longest chain of shown blockers above a task.
  const layer = new Map();
  const depth = (id, seen = new Set()) => {
    if (layer.has(id)) return layer.get(id);
    if (seen.has(id)) return 0;
    seen.add(id);
    const ups = tasks.get(id).blockedBy.filter((b) => shown.has(b));
    const d = ups.length === 0 ? 0 : 1 + Math.max(...ups.map((b) => depth(b, seen)));
    layer.set(id, d);
    return d;
  };
  const columns = [];
  for (const id of ids) {
    const d = depth(id);
    (columns[d] ||= []).push(id);
  }

  // Within a column, order by the mean row of the blockers (fewer crossings), then by id.
  const row = new Map();
  columns.forEach((col, c) => {
    if (c > 0) {
      const weight = (id) => {
        const ups = tasks.get(id).blockedBy.filter((b) => row.has(b));
        return ups.length ? ups.reduce((sum, b) => sum + row.get(b), 0) / ups.length : Infinity;
      };
      col.sort((a, b) => weight(a) - weight(b) || compareIds(a, b));
    }
    col.forEach((id, r) => row.set(id, r));
  });

  const tallest = Math.max(...columns.map((c) => c.length));
  const width = PAD * 2 + columns.length * NODE_W + (columns.length - 1) * GAP_X;
  const height = PAD * 2 + tallest * NODE_H + (tallest - 1) * GAP_Y;
  const at = (id) => {
    const c = layer.get(id);
    const offset = ((tallest - columns[c].length) * (NODE_H + GAP_Y)) / 2;
    return { x: PAD + c * (NODE_W + GAP_X), y: PAD + offset + row.get(id) * (NODE_H + GAP_Y) };
  };

  const edges = [];
  for (const id of ids) {
    const to = at(id);
    for (const b of tasks.get(id).blockedBy) {
      if (!shown.has(b)) continue;
      const from = at(b);
      const x1 = from.x + NODE_W;
      const y1 = from.y + NODE_H / 2;
      const x2 = to.x - 2;
      const y2 = to.y + NODE_H / 2;
      const bend = Math.max(24, (x2 - x1) / 2);
      const blocker = tasks.get(b).status;
      const dead = blocker === 'failed' || blocker === 'cancelled' || info.get(b).dead;
      const kind = blocker === 'completed' ? 'met' : dead ? 'broken' : 'unmet';
      edges.push(
        s('path', {
          class: `edge edge-${kind}`,
          d: `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`,
          'marker-end': `url(#arrow-${kind})`,
        }, s('title', { text: `${b} (${blocker}) blocks ${id}` })),
      );
    }
  }

  const nodes = ids.map((id) => {
    const task = tasks.get(id);
    const { x, y } = at(id);
    const dead = info.get(id).dead;
    return s('g', {
      class: ['node', `status-${task.status}`, dead && 'dead'],
      transform: `translate(${x},${y})`,
      'data-task': id,
      tabindex: '0',
      'aria-current': id === focus ? 'true' : null,
      role: 'button',
      onclick: () => onPick(id),
      onkeydown: (e) => (e.key === 'Enter' || e.key === ' ') && onPick(id),
    },
    s('title', { text: `${id}: ${task.subject} — ${task.status.replace('_', ' ')}${dead ? ` — can never be ready (${dead.at(-1)} ${tasks.get(dead.at(-1)).status})` : ''}` }),
    s('rect', { width: NODE_W, height: NODE_H, rx: 6 }),
    s('text', { class: 'node-id', x: 8, y: 15, text: id }),
    s('text', { class: 'node-status', x: 8, y: 30, text: dead ? 'never ready' : task.status.replace('_', ' ') }));
  });

  const marker = (kind) => s('marker', {
    id: `arrow-${kind}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse',
  }, s('path', { class: `arrow arrow-${kind}`, d: 'M0,0 L10,5 L0,10 z' }));

  return s('svg', {
    class: 'graph',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label': `Dependency graph of ${ids.length} of ${total} tasks with dependencies`,
    'data-shown': String(ids.length),
    'data-total': String(total),
  },
  s('defs', {}, marker('met'), marker('unmet'), marker('broken')),
  s('g', { class: 'edges' }, edges),
  s('g', { class: 'nodes' }, nodes));
}

/** The focused task and the tasks it waits on or that wait on it, up to FOCUS_STEPS steps out. */
function neighbourhood(tasks, info, focus) {
  const found = new Set([focus]);
  let frontier = [focus];
  for (let step = 0; step < FOCUS_STEPS && frontier.length && found.size < MAX_NODES; step++) {
    const next = [];
    for (const id of frontier) {
      for (const other of [...tasks.get(id).blockedBy, ...info.get(id).blocks]) {
        if (!tasks.has(other) || found.has(other) || found.size >= MAX_NODES) continue;
        found.add(other);
        next.push(other);
      }
    }
    frontier = next;
  }
  return [...found];
}
