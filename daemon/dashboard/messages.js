// The message log: newest first, filtered by type, sender and recipient, rows coloured by
// type; test results show their pass rate, fix-cycle progress its iteration, and a row about a
// task links to it. A row opens to its full `data`. A filter or words in the search box ask the
// server, which answers over every message of the team (not only the ones this page keeps), a
// page at a time, with the exact number of matches; a filter without words then follows the
// stream. Without either, the log is the newest messages the page holds, out of how many there
// are in all.

import { ago, clock, h, percent, replace } from './dom.js';
import { details } from './fix.js';
import { GATE, grade } from './chart.js';
import { saveViewState, taskHash } from './route.js';

const ROWS_SHOWN = 500;
const SEARCH_PAGE = 100;
const SEARCH_DELAY_MS = 250;
const KNOWN = new Set(['test_result', 'impl_progress', 'fix_required', 'error']);
/** Offered in the type filter before any message of the type arrived. */
const COMMON_TYPES = ['test_result', 'impl_progress', 'fix_required', 'fix_answer', 'error', 'note', 'task_action'];
const ROLES = ['coordinator', 'tester', 'executor', 'observer', 'lead', '*'];

export function mountMessages(root, state, api) {
  let visible = false;
  // The server's answer while a filter or words are set: {query, messages, total, next}.
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
        remember();
        search = null;
        if (serverAnswers()) runSearch();
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
      remember();
      clearTimeout(searchTimer);
      search = null;
      if (!serverAnswers()) {
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

  /** The filters and the search words go into the address (`#messages?type=…&q=…`). */
  function remember() {
    saveViewState('messages', { ...filters, q: searchText });
  }

  /** Takes the filters and words from the address, when it names others than those shown. */
  function restore(params) {
    const wanted = { type: params.type ?? '', from: params.from ?? '', to: params.to ?? '', q: (params.q ?? '').trim() };
    if (['type', 'from', 'to'].every((k) => wanted[k] === filters[k]) && wanted.q === searchText) return;
    for (const key of ['type', 'from', 'to']) {
      filters[key] = wanted[key];
      if (wanted[key]) seen[key].add(wanted[key]);
    }
    searchBox.value = wanted.q;
    searchText = wanted.q;
    search = null;
    if (serverAnswers()) runSearch();
  }

  /** Words or a filter: the server answers, over the whole history. */
  function serverAnswers() {
    return Boolean(searchText || filters.type || filters.from || filters.to);
  }

  /** What the current question is, to drop an answer to an older one. */
  function questionKey() {
    return JSON.stringify([searchText, filters]);
  }

  /** Asks the server for the matches (the first page, or the page before `before`). */
  function runSearch(before) {
    const query = questionKey();
    const params = { q: searchText, type: filters.type, from: filters.from, to: filters.to, limit: SEARCH_PAGE, before };
    // Messages that arrive meanwhile are the stream's to add (a filter without words follows it).
    const asOf = state.messages.at(-1)?.seq ?? 0;
    api.searchMessages(params).then((page) => {
      if (query !== questionKey()) return; // the words or filters changed meanwhile
      const earlier = before != null && search ? search.messages : [];
      const newest = before != null && search ? search.newest : Math.max(asOf, page.messages[0]?.seq ?? 0);
      search = { query, messages: [...earlier, ...page.messages], total: page.total, next: page.next, newest };
      draw();
    }).catch((err) => {
      if (query !== questionKey()) return;
      search = { query, messages: [], total: 0, next: null, error: err.message, newest: asOf };
      draw();
    });
  }

  /** A filter without words follows the stream: new matches go on top and into the count. */
  function followSearch(matches) {
    if (!search || search.error || searchText) return;
    const fresh = state.messages.filter((m) => m.seq > search.newest && matches(m));
    search.newest = state.messages.at(-1)?.seq ?? search.newest;
    if (!fresh.length) return;
    search.messages.unshift(...fresh.reverse());
    search.total += fresh.length;
  }

  function options(key) {
    if (key === 'type') for (const t of COMMON_TYPES) seen.type.add(t);
    else for (const a of state.agents.keys()) seen[key].add(a);
    if (key === 'to') for (const r of ROLES) seen.to.add(r);
    const values = [...seen[key]].sort();
    const select = selects[key];
    if (select.options.length === values.length + 1) return;
    replace(select, h('option', { value: '' }, 'any'), values.map((v) => h('option', { value: v }, v)));
    select.value = filters[key];
  }

  // What the live log shows now: its filters and the newest seq drawn. A new message with the
  // same filters adds its row on top and drops the oldest past ROWS_SHOWN, nothing else, so a
  // selection, an open row and the reading position survive it.
  let drawnKey = null;
  let drawnNewest = 0;
  let seenUpTo = 0;

  function draw() {
    for (let i = state.messages.length - 1; i >= 0 && state.messages[i].seq > seenUpTo; i--) {
      const m = state.messages[i];
      seen.type.add(m.type);
      seen.from.add(m.from);
      seen.to.add(m.to);
    }
    seenUpTo = state.messages.at(-1)?.seq ?? seenUpTo;
    if (!visible) return;
    for (const key of ['type', 'from', 'to']) options(key);
    const matches = (m) => !((filters.type && m.type !== filters.type) || (filters.from && m.from !== filters.from) || (filters.to && m.to !== filters.to));
    if (serverAnswers()) {
      drawnKey = null;
      followSearch(matches);
      drawSearch();
      return;
    }
    older.hidden = true;
    const shown = Math.min(ROWS_SHOWN, state.messages.length);
    const all = state.messageTotal ?? state.messages.length;
    count.textContent = `newest ${shown} shown of ${all} ${all === 1 ? 'message' : 'messages'} in all`;
    const key = JSON.stringify(filters);
    if (key === drawnKey) {
      addNewRows(matches);
      return;
    }
    drawnKey = key;
    drawnNewest = state.messages.at(-1)?.seq ?? 0;
    const rows = [];
    for (let i = state.messages.length - 1; i >= 0 && rows.length < ROWS_SHOWN; i--) {
      if (matches(state.messages[i])) rows.push(...row(state.messages[i]));
    }
    replace(body, rows.length ? rows : h('tr', { class: 'placeholder' }, h('td', { colspan: 5, class: 'empty' }, 'No messages yet.')));
  }

  function addNewRows(matches) {
    const fresh = [];
    for (let i = state.messages.length - 1; i >= 0 && state.messages[i].seq > drawnNewest; i--) {
      if (matches(state.messages[i])) fresh.push(...row(state.messages[i]));
    }
    drawnNewest = state.messages.at(-1)?.seq ?? drawnNewest;
    if (!fresh.length) return;
    // Rows added above what the reader looks at push it down: the first row in view is put
    // back where it was. Measured on that row, not on the table's height, because the browser
    // may already have kept it in place (scroll anchoring) and must not be corrected twice.
    const anchor = window.scrollY > 0 ? firstRowInView() : null;
    const topBefore = anchor?.getBoundingClientRect().top;
    body.querySelector('tr.placeholder')?.remove();
    body.prepend(...fresh);
    const rows = body.querySelectorAll('tr.msg');
    for (let i = rows.length - 1; i >= ROWS_SHOWN; i--) {
      const next = rows[i].nextElementSibling;
      if (next?.classList.contains('msg-details')) next.remove();
      rows[i].remove();
    }
    if (anchor?.isConnected) {
      const moved = anchor.getBoundingClientRect().top - topBefore;
      if (moved !== 0) window.scrollBy(0, moved);
    }
  }

  /** The first log row whose top is at or below the top of the window (under the top bar). */
  function firstRowInView() {
    if (body.getBoundingClientRect().top >= 0) return null; // the top of the log is in view
    for (const tr of body.rows) {
      if (tr.getBoundingClientRect().bottom > 0) return tr;
    }
    return null;
  }

  function drawSearch() {
    if (!search) {
      count.textContent = 'asking the server…';
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
    // Opening a row adds its detail row after it; nothing else is redrawn.
    const toggle = () => {
      const shown = open.has(m.seq);
      if (shown) open.delete(m.seq);
      else open.add(m.seq);
      main.classList.toggle('open', !shown);
      main.setAttribute('aria-expanded', String(!shown));
      if (shown && main.nextElementSibling?.classList.contains('msg-details')) main.nextElementSibling.remove();
      if (!shown) main.after(detailRow());
    };
    const detailRow = () => h('tr', { class: 'msg-details' }, h('td', { colspan: 5 }, details(m.data)));
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
    h('td', { class: 'time', title: `${clock(m.createdAt)} · ${m.createdAt}` }, ago(m.createdAt)),
    h('td', { class: 'route' }, h('strong', {}, m.from), ' → ', m.to),
    h('td', { class: 'type-cell' }, h('span', { class: `type type-${kind}` }, m.type)),
    h('td', { class: 'summary' }, extra(m), taskLink(m), h('span', { class: 'summary-text' }, m.summary)));
    if (!open.has(m.seq)) return [main];
    return [main, detailRow()];
  }

  state.on('messages', draw);
  state.on('agents', () => visible && draw()); // their names in the filters
  return {
    visible(v, params) {
      visible = v;
      // A bare `#messages` (the tab) keeps what is shown and writes it into the address.
      if (v && params && Object.keys(params).length) restore(params);
      else if (v) remember();
      draw();
    },
    stop() {
      clearTimeout(searchTimer);
      replace(root);
    },
  };
}

/** A link to the task a message is about (`data.taskId` or `data.task`), or null. */
function taskLink(m) {
  const id = typeof m.data?.taskId === 'string' ? m.data.taskId : typeof m.data?.task === 'string' ? m.data.task : null;
  if (!id) return null;
  // Following the link opens the task; it does not open the row.
  return h('a', { class: 'task-link', href: taskHash(id), onclick: (e) => e.stopPropagation() }, id);
}

/** What a known type adds in front of the summary. */
function extra(m) {
  const d = m.data && typeof m.data === 'object' ? m.data : {};
  const num = (v) => typeof v === 'number' && Number.isFinite(v);
  if (m.type === 'test_result' && num(d.passRate)) {
    // Below the gate (the report's own, else 95 %) is a warning, never green.
    const gate = num(d.qualityGate) ? d.qualityGate : GATE;
    const kind = d.passRate < gate ? grade(d.passRate, false) : grade(d.passRate, d.qualityGatePassed);
    return h('span', { class: `rate rate-${kind}`, title: num(d.total) ? `${d.passed ?? '?'} of ${d.total} passed, ${d.failed ?? '?'} failed` : 'pass rate' },
      percent(d.passRate), num(d.total) ? h('small', {}, ` ${d.passed ?? '?'}/${d.total}`) : null);
  }
  if (m.type === 'impl_progress' && (num(d.iteration) || num(d.passRate))) {
    const parts = [];
    if (num(d.iteration)) parts.push(`iter ${d.iteration}${num(d.maxIterations) ? `/${d.maxIterations}` : ''}`);
    if (num(d.passRate)) parts.push(percent(d.passRate));
    if (typeof d.strategy === 'string') parts.push(d.strategy);
    return h('span', { class: 'progress-note' }, parts.join(' · '));
  }
  return null;
}
