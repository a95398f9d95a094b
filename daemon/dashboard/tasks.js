// The task board: a column per status, a card per task (cards.js), and the dependency graph below
// the columns (the board is what a person acts on; the graph explains it). Pending lists the
// ready tasks first. A change redraws only what it changed: a card whose task or neighbours changed is
// swapped for a new one, a column is rebuilt only when its tasks or their order change, and the
// graph only when a status or a dependency changes. Filter and graph focus live in the address
// (`#tasks?filter=auth&focus=TEST-004`).

import { card, cardKey } from './cards.js';
import { analyse, compareIds, STATUSES } from './deps.js';
import { duration, h, replace } from './dom.js';
import { isOpenQuestion } from './gates.js';
import { dependencyGraph } from './graph.js';
import { saveViewState, taskHash } from './route.js';

const CARDS_PER_COLUMN = 200;
const LABELS = { pending: 'Pending', in_progress: 'In progress', completed: 'Completed', failed: 'Failed', cancelled: 'Cancelled' };

export function mountTasks(root, state, api) {
  let visible = false;
  let filter = '';
  let focus = '';
  let graphOpen = true;
  let graphKey = null;
  const drawn = new Map(); // task id → {key, el} of the card on the board
  const columns = new Map(); // status → {cards, count, ids: string joined}

  const remember = () => saveViewState('tasks', { filter: search.value.trim(), focus });
  const search = h('input', {
    type: 'search',
    class: 'filter',
    placeholder: 'Filter by id, subject, owner…',
    'aria-label': 'Filter tasks',
    oninput: (e) => {
      filter = e.target.value.trim().toLowerCase();
      remember();
      draw();
    },
  });
  const focusBox = h('input', {
    type: 'search', id: 'graph-focus', placeholder: 'TEST-001', 'aria-label': 'Focus the graph on a task', spellcheck: 'false', autocapitalize: 'off',
    onchange: (e) => setFocus(e.target.value.trim()),
  });
  const graphNote = h('p', { class: 'graph-note', id: 'graph-note' });
  const summary = h('span', { class: 'counts' });
  const graphBox = h('div', { class: 'graph-scroll' });
  const graphPanel = h('details', { class: 'panel graph-panel', open: true, ontoggle: (e) => { graphOpen = e.target.open; } },
    h('summary', {}, 'Dependencies ', h('span', { class: 'legend' },
      h('span', { class: 'swatch met' }), 'met ', h('span', { class: 'swatch unmet' }), 'waiting ',
      h('span', { class: 'swatch broken' }), 'blocker failed or cancelled')),
    h('div', { class: 'graph-tools' }, graphNote, h('label', { class: 'select' }, 'focus on ', focusBox)),
    graphBox);
  const board = h('div', { class: 'board', id: 'board' });
  for (const st of STATUSES) {
    const count = h('span', { class: 'count' });
    const cards = h('div', { class: 'cards' });
    board.append(h('section', { class: `column column-${st}`, 'data-status': st }, h('h3', {}, LABELS[st], count), cards));
    columns.set(st, { cards, count, ids: null });
  }
  replace(root, h('div', { class: 'toolbar' }, h('h2', {}, 'Tasks'), summary, search), board, graphPanel);

  // Lease countdowns tick every second without redrawing the board.
  const ticker = setInterval(tick, 1000);

  function tick() {
    if (!visible) return;
    const now = api.now();
    for (const el of root.querySelectorAll('[data-expires]')) {
      const left = Number(el.dataset.expires) - now;
      el.textContent = left > 0 ? `lease ${duration(left)} left` : 'lease expired';
      el.classList.toggle('lease-low', left < 10_000);
    }
  }

  function matches(task) {
    if (!filter) return true;
    return [task.id, task.subject, task.owner, task.claimedBy].some((v) => v && v.toLowerCase().includes(filter));
  }

  function setFocus(id) {
    focus = id;
    focusBox.value = id;
    graphKey = null;
    remember();
    draw();
  }

  function draw() {
    if (!visible) return;
    const tasks = state.tasks;
    const info = analyse(tasks);
    const byStatus = Object.fromEntries(STATUSES.map((st) => [st, []]));
    for (const task of tasks.values()) if (matches(task)) byStatus[task.status]?.push(task);

    const counts = STATUSES.map((st) => `${byStatus[st].length} ${LABELS[st].toLowerCase()}`);
    const dead = [...info.values()].filter((i) => i.dead).length;
    summary.textContent = `${tasks.size} tasks · ${counts.join(' · ')}${dead ? ` · ${dead} never ready` : ''}`;

    drawGraph(tasks, info);
    const keep = new Set();
    for (const st of STATUSES) {
      // Ready before waiting: what a worker takes next is on top.
      const waiting = (t) => (st === 'pending' && (info.get(t.id).unmet.length > 0 || isOpenQuestion(t)) ? 1 : 0);
      const list = byStatus[st].sort((a, b) => waiting(a) - waiting(b) || compareIds(a.id, b.id));
      const column = columns.get(st);
      column.count.textContent = String(list.length);
      const shown = list.slice(0, CARDS_PER_COLUMN);
      const els = shown.map((t) => {
        keep.add(t.id);
        const point = t.status === 'in_progress' ? state.progress.get(t.id)?.at(-1) : undefined;
        const key = cardKey(t, info.get(t.id), tasks, point);
        const known = drawn.get(t.id);
        if (known && known.key === key) return known.el;
        const el = card(t, info, tasks, point);
        // A card already in place is swapped alone; the column stays as it is.
        if (known?.el.isConnected && known.el.parentNode === column.cards) known.el.replaceWith(el);
        drawn.set(t.id, { key, el });
        return el;
      });
      const ids = shown.map((t) => t.id).join('\n') + `\n${list.length}`;
      if (ids !== column.ids) {
        column.ids = ids;
        replace(column.cards, els,
          list.length > CARDS_PER_COLUMN ? h('p', { class: 'more' }, `… ${list.length - CARDS_PER_COLUMN} more (filter to find them)`) : null,
          list.length === 0 ? h('p', { class: 'empty' }, '—') : null);
      }
    }
    for (const id of drawn.keys()) if (!keep.has(id)) drawn.delete(id);
    tick();
  }

  /** The graph is redrawn only when a status, a dependency or the focus changed. */
  function drawGraph(tasks, info) {
    graphPanel.hidden = tasks.size === 0;
    graphPanel.open = graphOpen;
    let key = focus;
    for (const t of tasks.values()) if (t.blockedBy.length || info.get(t.id).blocks.length) key += `|${t.id}:${t.status}:${t.blockedBy.join()}`;
    if (key === graphKey) return;
    graphKey = key;
    const graph = dependencyGraph(tasks, info, pick, focus || null);
    replace(graphBox, graph || h('p', { class: 'empty' }, 'No task depends on another.'));
    const shown = Number(graph?.dataset.shown ?? 0);
    const total = Number(graph?.dataset.total ?? 0);
    replace(graphNote,
      !graph ? null
        : focus && tasks.has(focus) ? [`${focus} and its neighbourhood: ${shown} of ${total} tasks with dependencies. `, h('button', { type: 'button', class: 'quiet', onclick: () => setFocus('') }, 'show all')]
          : shown < total ? `Showing ${shown} of ${total} tasks with dependencies (the first by id); focus on a task to see its neighbourhood.`
            : `${total} tasks with dependencies.`);
  }

  function pick(id) {
    const el = board.querySelector(`[data-task="${CSS.escape(id)}"]`);
    if (!el) {
      location.hash = taskHash(id);
      return;
    }
    el.scrollIntoView({ block: 'center', behavior: 'smooth' });
    el.classList.remove('flash');
    void el.offsetWidth; // restart the animation
    el.classList.add('flash');
  }

  state.on('tasks', draw);
  state.on('progress', draw); // an in-progress card's iteration and pass rate
  return {
    visible(v, params) {
      visible = v;
      if (v && params && Object.keys(params).length) {
        search.value = params.filter ?? '';
        filter = search.value.trim().toLowerCase();
        if ((params.focus ?? '') !== focus) setFocus(params.focus ?? '');
      } else if (v) {
        remember();
      }
      draw();
    },
    stop() {
      clearInterval(ticker);
      replace(root);
    },
  };
}
