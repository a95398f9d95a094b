// The task board: a column per status, a card per task (owner, holder, live lease countdown,
// attempts, blockers and what it blocks), tasks that can never become ready marked, and the
// dependency graph above the columns.

import { analyse, compareIds, STATUSES } from './deps.js';
import { duration, h, replace } from './dom.js';
import { dependencyGraph } from './graph.js';

const CARDS_PER_COLUMN = 200;
const LABELS = { pending: 'Pending', in_progress: 'In progress', completed: 'Completed', failed: 'Failed', cancelled: 'Cancelled' };

export function mountTasks(root, state, api) {
  let visible = false;
  let filter = '';
  let graphOpen = true;

  const search = h('input', {
    type: 'search',
    class: 'filter',
    placeholder: 'Filter by id, subject, owner…',
    'aria-label': 'Filter tasks',
    oninput: (e) => {
      filter = e.target.value.trim().toLowerCase();
      draw();
    },
  });
  const summary = h('span', { class: 'counts' });
  const graphBox = h('div', { class: 'graph-scroll' });
  const graphPanel = h('details', { class: 'panel graph-panel', open: true, ontoggle: (e) => { graphOpen = e.target.open; } },
    h('summary', {}, 'Dependencies ', h('span', { class: 'legend' },
      h('span', { class: 'swatch met' }), 'met ', h('span', { class: 'swatch unmet' }), 'waiting ',
      h('span', { class: 'swatch broken' }), 'blocker failed or cancelled')),
    graphBox);
  const board = h('div', { class: 'board', id: 'board' });
  replace(root, h('div', { class: 'toolbar' }, h('h2', {}, 'Tasks'), summary, search), graphPanel, board);

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

  function draw() {
    if (!visible) return;
    const tasks = state.tasks;
    const info = analyse(tasks);
    const byStatus = Object.fromEntries(STATUSES.map((st) => [st, []]));
    for (const task of tasks.values()) if (matches(task)) byStatus[task.status]?.push(task);

    const counts = STATUSES.map((st) => `${byStatus[st].length} ${LABELS[st].toLowerCase()}`);
    const dead = [...info.values()].filter((i) => i.dead).length;
    summary.textContent = `${tasks.size} tasks · ${counts.join(' · ')}${dead ? ` · ${dead} never ready` : ''}`;

    const graph = dependencyGraph(tasks, info, pick);
    replace(graphBox, graph || h('p', { class: 'empty' }, 'No task depends on another.'));
    graphPanel.hidden = tasks.size === 0;
    graphPanel.open = graphOpen;

    replace(board, STATUSES.map((st) => {
      const list = byStatus[st].sort((a, b) => compareIds(a.id, b.id));
      return h('section', { class: `column column-${st}`, 'data-status': st },
        h('h3', {}, LABELS[st], h('span', { class: 'count' }, String(list.length))),
        h('div', { class: 'cards' },
          list.slice(0, CARDS_PER_COLUMN).map((t) => card(t, info, tasks)),
          list.length > CARDS_PER_COLUMN ? h('p', { class: 'more' }, `… ${list.length - CARDS_PER_COLUMN} more (filter to find them)`) : null,
          list.length === 0 ? h('p', { class: 'empty' }, '—') : null));
    }));
    tick();
  }

  function pick(id) {
    const el = board.querySelector(`[data-task="${CSS.escape(id)}"]`);
    if (!el) return;
    el.scrollIntoView({ block: 'center', behavior: 'smooth' });
    el.classList.remove('flash');
    void el.offsetWidth; // restart the animation
    el.classList.add('flash');
  }

  state.on('tasks', draw);
  return {
    visible(v) {
      visible = v;
      draw();
    },
    stop() {
      clearInterval(ticker);
      replace(root);
    },
  };
}

function card(task, info, tasks) {
  const i = info.get(task.id);
  const chip = (id) => {
    const status = tasks.get(id)?.status ?? 'unknown';
    return h('span', { class: `chip dep dep-${status}`, title: `${id}: ${status.replace('_', ' ')}` }, id);
  };
  let badge = null;
  if (i.dead) {
    const root = i.dead.at(-1);
    badge = h('span', {
      class: 'badge badge-dead',
      title: `Can never become ready: ${i.dead.join(' ← ')} (${root} ${tasks.get(root).status})`,
    }, 'never ready');
  } else if (task.status === 'pending') {
    badge = i.unmet.length === 0 ? h('span', { class: 'badge badge-ready' }, 'ready') : h('span', { class: 'badge badge-waiting' }, `waiting on ${i.unmet.length}`);
  }

  const facts = [];
  if (task.owner) facts.push(h('span', { class: 'fact' }, 'owner ', h('strong', {}, task.owner)));
  if (task.claimedBy) facts.push(h('span', { class: 'fact' }, task.status === 'in_progress' ? 'claimed by ' : 'last held by ', h('strong', {}, task.claimedBy)));
  const attempts = h('span', { class: ['fact', task.attempts > 0 && 'attempts-used'], title: 'Leases that expired / attempts allowed' },
    `attempts ${task.attempts}/${task.maxAttempts}`);
  facts.push(attempts);
  if (task.status === 'in_progress' && task.leaseExpiresAt) {
    const expires = Date.parse(task.leaseExpiresAt);
    if (!Number.isNaN(expires)) facts.push(h('span', { class: 'fact lease', dataset: { expires: String(expires) }, title: `Lease expires ${task.leaseExpiresAt}` }, 'lease'));
  }

  return h('article', { class: ['card', `card-${task.status}`, i.dead && 'card-dead'], 'data-task': task.id },
    h('header', {}, h('span', { class: 'task-id' }, task.id), badge),
    h('p', { class: 'subject' }, task.subject),
    task.status === 'in_progress' && task.activeForm ? h('p', { class: 'active-form' }, task.activeForm) : null,
    h('div', { class: 'facts' }, facts),
    task.blockedBy.length ? h('div', { class: 'deps' }, h('span', { class: 'dep-label' }, 'blocked by'), task.blockedBy.map(chip)) : null,
    i.blocks.length ? h('div', { class: 'deps' }, h('span', { class: 'dep-label' }, 'blocks'), i.blocks.map(chip)) : null,
    i.dead ? h('p', { class: 'dead-reason' }, `${i.dead.at(-1)} ${tasks.get(i.dead.at(-1)).status}${i.dead.length > 2 ? ` (via ${i.dead.slice(1, -1).join(', ')})` : ''}: this task can never become ready`) : null,
    task.failureReason ? h('p', { class: 'failure' }, task.failureReason) : null,
    task.status === 'completed' && task.result && typeof task.result.passRate === 'number'
      ? h('p', { class: 'result' }, `pass rate ${task.result.passRate.toFixed(1)} %`) : null);
}
