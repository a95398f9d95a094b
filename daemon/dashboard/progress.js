// The Pass-rate view: the team's test history on top, then a paged, sortable table of every task
// that ever reported a pass rate — each one's newest report over the whole history comes from
// the server (`GET …/progress`, page after page) when the view first opens, the newest 1,000
// `test_result`s and the messages loaded at sign-in add earlier points, the stream every new one
// — latest pass rate, reports, iteration, gate — and charts only for the tasks ticked in it — or, with none ticked, for the few that reported last. Sort, page and
// selection live in the address (`#progress?sort=rate&dir=asc&page=2&sel=TEST-001,TEST-004`).
// A new report redraws one table row when it is on the page, and only the charts it touches.

import { chartCard, grade, historyCard } from './chart.js';
import { ago, clock, h, percent, replace } from './dom.js';
import { saveViewState, taskHash } from './route.js';

const PAGE = 50;
const CHARTS_BY_DEFAULT = 6;
const MAX_SELECTED = 12;
const BACKFILL = 1000;
const COLUMNS = [
  { key: 'id', label: 'task' },
  { key: 'subject', label: 'subject' },
  { key: 'rate', label: 'latest pass rate' },
  { key: 'reports', label: 'reports' },
  { key: 'iteration', label: 'iteration' },
  { key: 'gate', label: 'gate' },
  { key: 'at', label: 'last report' },
];

export function mountProgress(root, state, api) {
  let visible = false;
  let backfilled = false;
  let sort = 'at';
  let dir = 'desc';
  let page = 1;
  let selected = new Set();
  let dirty = true; // the table needs a full redraw (sort, page, selection, first show)
  const changedTasks = new Set(); // reports since the last draw
  let historyShown = null;

  const count = h('span', { class: 'counts', id: 'progress-count' });
  const trend = h('div', { class: 'charts', id: 'test-history' });
  const head = h('tr');
  const body = h('tbody');
  const pager = h('div', { class: 'pager', id: 'progress-pager' });
  const chartsNote = h('p', { class: 'counts', id: 'charts-note' });
  const grid = h('div', { class: 'charts', id: 'charts' });
  replace(root, trend,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Pass rate per task'), count),
    h('div', { class: 'table-scroll' }, h('table', { class: 'progress-table', id: 'progress-table' }, h('thead', {}, head), body)),
    pager, chartsNote, grid);

  function rowsSorted() {
    const rows = [...state.progress.entries()].map(([id, points]) => {
      const latest = points[points.length - 1];
      return { id, points, latest, task: state.tasks.get(id), reports: points.length };
    });
    const value = (r) => ({
      id: r.id, subject: r.task?.subject ?? '', rate: r.latest.passRate, reports: r.reports,
      iteration: r.latest.iteration, gate: r.latest.gate === true ? 2 : r.latest.gate === false ? 0 : 1, at: r.latest.seq,
    })[sort];
    const sign = dir === 'asc' ? 1 : -1;
    rows.sort((a, b) => {
      const x = value(a);
      const y = value(b);
      const c = typeof x === 'string' ? x.localeCompare(y, undefined, { numeric: true }) : x - y;
      return c !== 0 ? sign * c : a.id.localeCompare(b.id, undefined, { numeric: true });
    });
    return rows;
  }

  function remember() {
    saveViewState('progress', { sort, dir, page: page > 1 ? page : '', sel: [...selected].join(',') });
  }

  function draw() {
    if (!visible) return;
    if (state.testHistory !== historyShown) {
      historyShown = state.testHistory;
      replace(trend, historyShown && historyShown.runs.length ? historyCard(historyShown) : null);
    }
    if (!dirty && changedTasks.size && !sortDependsOnChanges()) return patchRows();
    dirty = false;
    const touched = new Set(changedTasks);
    changedTasks.clear();
    const rows = rowsSorted();
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    page = Math.min(Math.max(1, page), pages);
    count.textContent = rows.length ? `${rows.length} tasks reported a pass rate; each one's latest is its newest report over the whole history (from the server); "reports" counts those this page loaded, and a task's detail searches all of them` : '';
    replace(head, COLUMNS.map((c) => h('th', { 'aria-sort': c.key === sort ? (dir === 'asc' ? 'ascending' : 'descending') : null },
      h('button', { type: 'button', class: 'sort', 'data-sort': c.key, onclick: () => sortBy(c.key) },
        c.label, c.key === sort ? (dir === 'asc' ? ' ▲' : ' ▼') : ''))), h('th', {}, 'chart'));
    const shown = rows.slice((page - 1) * PAGE, page * PAGE);
    replace(body, shown.length ? shown.map(tableRow)
      : h('tr', {}, h('td', { colspan: COLUMNS.length + 1, class: 'empty' }, 'No impl_progress or test_result message with a taskId and a passRate yet.')));
    replace(pager, pages > 1 ? [
      h('button', { type: 'button', class: 'quiet', 'data-page': 'prev', disabled: page <= 1, onclick: () => goTo(page - 1) }, '← newer'),
      h('span', { class: 'counts', id: 'progress-page' }, `page ${page} of ${pages}`),
      h('button', { type: 'button', class: 'quiet', 'data-page': 'next', disabled: page >= pages, onclick: () => goTo(page + 1) }, 'older →'),
    ] : []);
    drawCharts(rows, touched);
  }

  /** Sorting by the latest report moves rows with every report: then the page is redrawn. */
  function sortDependsOnChanges() {
    return sort !== 'id' && sort !== 'subject';
  }

  function patchRows() {
    for (const id of changedTasks) {
      const tr = body.querySelector(`tr[data-task="${CSS.escape(id)}"]`);
      const points = state.progress.get(id);
      if (tr && points) tr.replaceWith(tableRow({ id, points, latest: points[points.length - 1], task: state.tasks.get(id), reports: points.length }));
    }
    const touched = [...changedTasks];
    changedTasks.clear();
    for (const id of touched) {
      const card = grid.querySelector(`.chart-card[data-task="${CSS.escape(id)}"]`);
      if (card) card.replaceWith(chartCard(id, state.progress.get(id), state.tasks.get(id)));
    }
  }

  function tableRow(r) {
    const on = selected.has(r.id);
    return h('tr', { 'data-task': r.id, class: on && 'selected' },
      h('td', {}, h('a', { class: 'task-id', href: taskHash(r.id) }, r.id)),
      h('td', { class: 'subject-cell' }, r.task?.subject ?? ''),
      h('td', {}, h('span', { class: `rate rate-${grade(r.latest.passRate, r.latest.gate)}` }, percent(r.latest.passRate))),
      h('td', { class: 'num' }, String(r.reports)),
      h('td', { class: 'num' }, `${r.latest.iteration}${r.latest.maxIterations ? `/${r.latest.maxIterations}` : ''}`),
      h('td', {}, r.latest.gate === true ? 'passed' : r.latest.gate === false ? 'not passed' : '—'),
      h('td', { class: 'time', title: `${clock(r.latest.at)} · ${r.latest.at}` }, ago(r.latest.at)),
      h('td', {}, h('input', {
        type: 'checkbox', 'aria-label': `chart ${r.id}`, checked: on, 'data-select': r.id,
        onchange: (e) => toggle(r.id, e.target.checked),
      })));
  }

  /** The charts of the chosen tasks; when the same tasks stay chosen, only those reported on are redrawn. */
  function drawCharts(rows, touched) {
    const chosen = selected.size
      ? [...selected].filter((id) => state.progress.has(id))
      : [...rows].sort((a, b) => b.latest.seq - a.latest.seq).slice(0, CHARTS_BY_DEFAULT).map((r) => r.id);
    chartsNote.textContent = !rows.length ? ''
      : selected.size ? `Charts of the ${chosen.length} ticked ${chosen.length === 1 ? 'task' : 'tasks'}.`
        : `Charts of the ${chosen.length} ${chosen.length === 1 ? 'task' : 'tasks'} that reported last; tick rows to choose (up to ${MAX_SELECTED}).`;
    const shown = [...grid.children].map((el) => el.dataset.task);
    const card = (id) => chartCard(id, state.progress.get(id), state.tasks.get(id));
    if (shown.join('\n') !== chosen.join('\n')) {
      replace(grid, chosen.map(card));
      return;
    }
    for (const el of [...grid.children]) if (touched.has(el.dataset.task)) el.replaceWith(card(el.dataset.task));
  }

  function sortBy(key) {
    dir = key === sort ? (dir === 'asc' ? 'desc' : 'asc') : key === 'id' || key === 'subject' ? 'asc' : 'desc';
    sort = key;
    page = 1;
    redraw();
  }

  function goTo(n) {
    page = n;
    redraw();
  }

  function toggle(id, on) {
    if (on && selected.size >= MAX_SELECTED) {
      chartsNote.textContent = `At most ${MAX_SELECTED} charts at a time.`;
      body.querySelector(`input[data-select="${CSS.escape(id)}"]`).checked = false;
      return;
    }
    if (on) selected.add(id);
    else selected.delete(id);
    redraw();
  }

  function redraw() {
    dirty = true;
    remember();
    draw();
  }

  state.on('progress', () => {
    for (const id of state.progressChanged.splice(0)) changedTasks.add(id);
    draw();
  });
  state.on('tasks', () => {
    if (visible) {
      dirty = true;
      draw();
    }
  });
  return {
    visible(v, params) {
      visible = v;
      if (v && !backfilled) {
        // The newest test results of the team, beyond the messages loaded at sign-in: their
        // tasks join the table (once, when the view is first opened).
        backfilled = true;
        api.searchMessages({ type: 'test_result', limit: BACKFILL })
          .then((page) => state.backfillPoints(page.messages))
          .catch((err) => console.warn('huddle dashboard: loading test results failed:', err.message));
        // Every task's newest report, so "worst first" covers the whole history.
        api.allProgress()
          .then((messages) => state.backfillPoints(messages))
          .catch((err) => console.warn('huddle dashboard: loading each task\'s pass rate failed:', err.message));
      }
      if (v && params && Object.keys(params).length) {
        sort = COLUMNS.some((c) => c.key === params.sort) ? params.sort : sort;
        dir = params.dir === 'asc' || params.dir === 'desc' ? params.dir : dir;
        page = Number(params.page) > 0 ? Number(params.page) : 1;
        selected = new Set((params.sel ?? '').split(',').filter(Boolean).slice(0, MAX_SELECTED));
      } else if (v) {
        remember();
      }
      dirty = true;
      draw();
    },
    stop() {
      replace(root);
    },
  };
}
