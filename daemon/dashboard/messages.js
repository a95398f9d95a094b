// The message log: newest first, filtered by type, sender and recipient, rows coloured by
// type; test results show their pass rate, fix-cycle progress its iteration. A row opens to
// its full `data`. Words in the search box search every message of the team on the server
// (not only the ones this page keeps), with the same filters, a page at a time.

import { clock, h, percent, replace } from './dom.js';

const ROWS_SHOWN = 500;
const SEARCH_PAGE = 100;
const SEARCH_DELAY_MS = 250;
const KNOWN = new Set(['test_result', 'impl_progress', 'fix_required', 'error']);

export function mountMessages(root, state, api) {
  let visible = false;
  // The server's answer while the search box has words: {query, messages, total, next}.
  let search = null;
  let searchTimer = null;
  let searchText = '';
  const open = new Set(); // seqs whose details are shown
  const filters = { type: '', from: '', to: '' };
  const seen = { type: new Set(), from: new Set(), to: new Set() };

  const selects = {};
  for (const key of ['type', 'from', 'to']) {
    selects[key] = h('select', {
      'aria-label': `Filter by ${key}`,
      id: `filter-${key}`,
      onchange: (e) => {
        filters[key] = e.target.value;
        if (searchText) runSearch();
        draw();
      },
    });
  }
  const searchBox = h('input', {
    type: 'search',
    id: 'message-search',
    placeholder: 'search all messages',
    'aria-label': 'Search all messages',
    oninput: (e) => {
      searchText = e.target.value.trim();
      clearTimeout(searchTimer);
      if (!searchText) {
        search = null;
        draw();
        return;
      }
      searchTimer = setTimeout(runSearch, SEARCH_DELAY_MS);
    },
  });
  const older = h('button', { type: 'button', id: 'search-older', hidden: true, onclick: () => runSearch(search?.next) }, 'older matches');
  const count = h('span', { class: 'counts' });
  const body = h('tbody');
  replace(root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Messages'), count, searchBox,
      h('label', { class: 'select' }, 'type ', selects.type),
      h('label', { class: 'select' }, 'from ', selects.from),
      h('label', { class: 'select' }, 'to ', selects.to)),
    h('table', { class: 'messages', id: 'message-log' },
      h('thead', {}, h('tr', {}, h('th', {}, '#'), h('th', {}, 'time'), h('th', {}, 'from → to'), h('th', {}, 'type'), h('th', {}, 'summary'))),
      body),
    older);

  /** Asks the server for the matches (the first page, or the page before `before`). */
  function runSearch(before) {
    const query = searchText;
    const params = { q: query, type: filters.type, from: filters.from, to: filters.to, limit: SEARCH_PAGE, before };
    api.searchMessages(params).then((page) => {
      if (query !== searchText) return; // the words changed meanwhile
      const earlier = before != null && search ? search.messages : [];
      search = { query, messages: [...earlier, ...page.messages], total: page.total, next: page.next };
      draw();
    }).catch((err) => {
      if (query !== searchText) return;
      search = { query, messages: [], total: 0, next: null, error: err.message };
      draw();
    });
  }

  function options(key) {
    const values = [...seen[key]].sort();
    const select = selects[key];
    if (select.options.length === values.length + 1) return;
    replace(select, h('option', { value: '' }, 'any'), values.map((v) => h('option', { value: v }, v)));
    select.value = filters[key];
  }

  function draw() {
    for (const m of state.messages) {
      seen.type.add(m.type);
      seen.from.add(m.from);
      seen.to.add(m.to);
    }
    if (!visible) return;
    for (const key of ['type', 'from', 'to']) options(key);
    if (searchText) {
      drawSearch();
      return;
    }
    older.hidden = true;
    const rows = [];
    let total = 0;
    for (let i = state.messages.length - 1; i >= 0; i--) {
      const m = state.messages[i];
      if ((filters.type && m.type !== filters.type) || (filters.from && m.from !== filters.from) || (filters.to && m.to !== filters.to)) continue;
      total += 1;
      if (rows.length < ROWS_SHOWN) rows.push(...row(m));
    }
    count.textContent = `${total} shown${total > ROWS_SHOWN ? ` (latest ${ROWS_SHOWN})` : ''} of ${state.messages.length}`;
    replace(body, rows.length ? rows : h('tr', {}, h('td', { colspan: 5, class: 'empty' }, 'No messages yet.')));
  }

  function drawSearch() {
    if (!search) {
      count.textContent = 'searching…';
      return;
    }
    const n = search.total;
    count.textContent = search.error
      ? `search failed: ${search.error}`
      : `${n} ${n === 1 ? 'match' : 'matches'} in all messages${search.messages.length < n ? ` (newest ${search.messages.length} shown)` : ''}`;
    older.hidden = search.next == null;
    const rows = search.messages.flatMap(row);
    replace(body, rows.length ? rows : h('tr', {}, h('td', { colspan: 5, class: 'empty' }, 'No message matches.')));
  }

  function row(m) {
    const kind = KNOWN.has(m.type) ? m.type : 'other';
    const toggle = () => {
      if (open.has(m.seq)) open.delete(m.seq);
      else open.add(m.seq);
      draw();
    };
    const main = h('tr', {
      class: ['msg', `msg-${kind}`, open.has(m.seq) && 'open'],
      'data-seq': String(m.seq),
      'data-type': m.type,
      tabindex: '0',
      'aria-expanded': String(open.has(m.seq)),
      onclick: toggle,
      onkeydown: (e) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), toggle()),
    },
    h('td', { class: 'seq' }, String(m.seq)),
    h('td', { class: 'time', title: m.createdAt }, clock(m.createdAt)),
    h('td', { class: 'route' }, h('strong', {}, m.from), ' → ', m.to),
    h('td', {}, h('span', { class: `type type-${kind}` }, m.type)),
    h('td', { class: 'summary' }, extra(m), h('span', { class: 'summary-text' }, m.summary)));
    if (!open.has(m.seq)) return [main];
    return [main, h('tr', { class: 'msg-details' }, h('td', { colspan: 5 }, details(m.data)))];
  }

  state.on('messages', draw);
  return {
    visible(v) {
      visible = v;
      draw();
    },
    stop() {
      clearTimeout(searchTimer);
      replace(root);
    },
  };
}

/**
 * A message's data in its detail row. A fix (`impl_progress`, `test_result`) shows its changed
 * files — test files marked — and its unified diff line by line before the rest of the JSON.
 */
function details(data) {
  const d = data && typeof data === 'object' && !Array.isArray(data) ? data : null;
  if (!d || !Array.isArray(d.changedFiles) || !d.changedFiles.length || typeof d.diff !== 'string') {
    return h('pre', {}, JSON.stringify(data, null, 2));
  }
  const tests = new Set(Array.isArray(d.testFilesChanged) ? d.testFilesChanged : []);
  const { diff, ...rest } = d;
  const kind = (line) => {
    if (line.startsWith('+++') || line.startsWith('---')) return 'diff-file';
    if (line.startsWith('+')) return 'diff-add';
    if (line.startsWith('-')) return 'diff-del';
    if (line.startsWith('@@')) return 'diff-hunk';
    return null;
  };
  return [
    h('div', { class: 'changed-files' }, 'Changed files: ',
      d.changedFiles.map((f) => h('code', { class: tests.has(f) && 'test-file', title: tests.has(f) ? 'a test file' : null }, String(f)))),
    h('pre', { class: 'diff' }, diff.split('\n').map((line) => h('span', { class: kind(line) }, `${line}\n`))),
    h('pre', {}, JSON.stringify(rest, null, 2)),
  ];
}

/** What a known type adds in front of the summary. */
function extra(m) {
  const d = m.data && typeof m.data === 'object' ? m.data : {};
  const num = (v) => typeof v === 'number' && Number.isFinite(v);
  if (m.type === 'test_result' && num(d.passRate)) {
    const grade = d.passRate >= 95 ? 'good' : d.passRate >= 70 ? 'fair' : 'poor';
    return h('span', { class: `rate rate-${grade}`, title: num(d.total) ? `${d.passed ?? '?'} of ${d.total} passed, ${d.failed ?? '?'} failed` : 'pass rate' },
      percent(d.passRate), num(d.total) ? h('small', {}, ` ${d.passed ?? '?'}/${d.total}`) : null);
  }
  if (m.type === 'impl_progress' && (num(d.iteration) || num(d.passRate))) {
    const parts = [];
    if (typeof d.taskId === 'string') parts.push(d.taskId);
    if (num(d.iteration)) parts.push(`iter ${d.iteration}${num(d.maxIterations) ? `/${d.maxIterations}` : ''}`);
    if (num(d.passRate)) parts.push(percent(d.passRate));
    if (typeof d.strategy === 'string') parts.push(d.strategy);
    return h('span', { class: 'progress-note' }, parts.join(' · '));
  }
  if ((m.type === 'fix_required' || m.type === 'error') && typeof d.taskId === 'string') {
    return h('span', { class: 'progress-note' }, d.taskId);
  }
  return null;
}
