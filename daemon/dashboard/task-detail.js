// One task at its own address (`#/tasks/TEST-001`): its verdict first (verdict.js), its fields
// (the raw result collapsed), lease and attempts, blockers and
// dependents, its change timeline (`GET …/tasks/{id}/events`), its messages (the search API's
// `task=` filter), its pass-rate points and the testers' runs of the time, the last fix's changed
// files and diff, and — for a token whose role may — the actions a person takes on it.

import { analyse } from './deps.js';
import { ago, clock, duration, h, percent, replace } from './dom.js';
import { changedFiles, diffView, hasFix } from './fix.js';
import { markdown } from './markdown.js';
import { taskHash } from './route.js';
import { mountGateActions } from './gates.js';
import { mountTaskActions } from './task-actions.js';
import { setTitle } from './title.js';
import { lastReport, verdictBlock } from './verdict.js';

const MESSAGES_SHOWN = 100;
const RELOAD_DELAY_MS = 150;
const GATE = 95;

export function mountTaskDetail(root, state, api, me) {
  let visible = false;
  let id = null;
  let shownVersion = null;
  let events = null; // the task's events, newest first, or {error}
  let messages = null; // {messages, total} newest first, or {error}
  let gates = null; // the gates that held the task (`GET …/tasks/{id}`), or null
  let spend = null; // what its model calls cost (`GET …/spend?task=`), or null
  let reloadTimer = null;
  let messagesSeen = state.messages.at(-1)?.seq ?? 0;

  const head = h('div', { class: 'detail-head' });
  const verdict = h('div', { class: 'detail-verdict' });
  const facts = h('dl', { class: 'detail-facts' });
  const deps = h('div', { class: 'detail-deps' });
  const actions = mountTaskActions(state, api, me, () => id);
  const gateActions = mountGateActions(state, api, me);
  const timeline = h('ol', { class: 'timeline', id: 'task-timeline' });
  const log = h('div', { class: 'detail-messages', id: 'task-messages' });
  const runsBox = h('div', { class: 'detail-runs', id: 'task-runs' });
  const fixBox = h('div', { class: 'detail-fix', id: 'task-fix' });
  const section = (title, ...body) => h('section', { class: 'panel detail-section' }, h('h3', {}, title), body);
  replace(root,
    h('p', { class: 'back' }, h('a', { href: '#tasks' }, '← all tasks')),
    head, verdict, facts, deps, gateActions.root, actions.root,
    h('div', { class: 'detail-grid' },
      section('Timeline', timeline),
      section('Last fix', fixBox),
      section('Test runs', runsBox),
      section('Messages', log)));

  // The lease counts down every second without a redraw.
  const ticker = setInterval(() => {
    if (!visible) return;
    for (const el of root.querySelectorAll('[data-expires]')) {
      const left = Number(el.dataset.expires) - api.now();
      el.textContent = left > 0 ? `${duration(left)} left` : 'expired';
    }
  }, 1000);

  function open(taskId) {
    if (taskId !== id) {
      id = taskId;
      shownVersion = null;
      events = null;
      messages = null;
      gates = null;
      spend = null;
      actions.reset();
      gateActions.reset();
    }
    load();
  }

  /** The task's events and messages from the API (the task itself comes with the board's state). */
  function load() {
    clearTimeout(reloadTimer);
    const taskId = id;
    api.taskEvents(taskId).then((list) => { events = list; }, (err) => { events = { error: err.message }; })
      .then(() => taskId === id && draw());
    api.searchMessages({ task: taskId, limit: MESSAGES_SHOWN })
      .then((page) => { messages = page; }, (err) => { messages = { error: err.message }; })
      .then(() => taskId === id && draw());
    // Its reports over the whole history, not only those the page holds: "Test runs" lists them.
    for (const type of ['test_result', 'impl_progress']) {
      api.searchMessages({ task: taskId, type, limit: 500 })
        .then((page) => state.backfillPoints(page.messages))
        .catch((err) => console.warn(`huddle dashboard: loading ${taskId}'s reports failed:`, err.message));
    }
    // What its model calls cost (the spend ledger).
    api.spend(taskId).then((report) => { spend = report.total; }, () => { spend = null; })
      .then(() => taskId === id && draw());
    // The full task: it carries the gates that held it, which the board's list does not.
    api.task(taskId).then((task) => {
      if (taskId !== id) return;
      gates = task.gates ?? [];
      if (!state.tasks.has(taskId) || state.tasks.get(taskId).version < task.version) state.putTask(task);
      else draw();
    }).catch(() => draw());
  }

  function reloadSoon() {
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(load, RELOAD_DELAY_MS);
  }

  function draw() {
    if (!visible || id == null) return;
    const task = state.tasks.get(id);
    if (!task) {
      replace(head, h('h2', {}, id), h('p', { class: 'empty' }, 'No such task in this team (or not loaded yet).'));
      for (const el of [verdict, facts, deps, timeline, log, runsBox, fixBox]) replace(el);
      actions.draw(null);
      gateActions.draw(null);
      return;
    }
    shownVersion = task.version;
    setTitle(`${task.id} · huddle`);
    drawHead(task);
    replace(verdict, verdictBlock(task, lastReport(messages?.messages), gates));
    drawDeps(task);
    gateActions.draw(task);
    actions.draw(task, messages?.messages ?? []);
    drawTimeline();
    drawMessages();
    drawRuns(task);
    drawFix();
  }

  function drawHead(task) {
    replace(head,
      h('h2', { class: 'detail-title' }, h('span', { class: 'task-id' }, task.id), ' ',
        h('span', { class: `status status-${task.status}` }, task.status.replace('_', ' ')), ' ',
        h('span', { class: 'detail-subject' }, task.subject)),
      task.description ? markdown(task.description) : null);
    const row = (label, ...value) => [h('dt', {}, label), h('dd', {}, value)];
    const expires = Date.parse(task.leaseExpiresAt ?? '');
    replace(facts,
      row('owner', task.owner ?? '—'),
      row(task.status === 'in_progress' ? 'held by' : 'last held by', task.claimedBy ?? '—'),
      task.status === 'in_progress' && !Number.isNaN(expires)
        ? row('lease', h('span', { class: 'lease', dataset: { expires: String(expires) }, title: task.leaseExpiresAt }, '…'))
        : null,
      row('attempts', `${task.attempts} of ${task.maxAttempts}`),
      spend && spend.calls > 0
        ? row('model spend', h('span', { class: 'spend', 'data-tokens': String(spend.tokens) },
          `${spend.calls} ${spend.calls === 1 ? 'call' : 'calls'}, ${spend.tokens} tokens (${spend.promptTokens} prompt, ${spend.completionTokens} completion)`
          + (spend.costMicros > 0 ? `, cost ${spend.costMicros / 1e6}` : '')))
        : null,
      task.activeForm ? row('active form', task.activeForm) : null,
      task.failureReason ? row('failure', h('span', { class: 'failure' }, task.failureReason)) : null,
      typeof task.result?.branch === 'string'
        ? row('fix branch', h('code', { class: 'fix-branch' }, task.result.branch),
          ` at ${String(task.result.commit ?? '').slice(0, 12)} from ${String(task.result.base ?? '').slice(0, 12)} — `,
          h('code', {}, `huddle task merge ${task.id}`))
        : null,
      task.result != null
        ? row('result', h('details', { class: 'raw-result' }, h('summary', {}, 'raw JSON'), h('pre', { class: 'capped' }, JSON.stringify(task.result, null, 2))))
        : null,
      row('version', String(task.version)),
      row('created', h('span', { title: task.createdAt }, ago(task.createdAt))),
      row('updated', h('span', { title: task.updatedAt }, ago(task.updatedAt))),
      ['completed', 'failed', 'cancelled'].includes(task.status)
        ? row('took', duration(Date.parse(task.updatedAt) - Date.parse(task.createdAt))) : null);
  }

  function drawDeps(task) {
    const info = analyse(state.tasks).get(task.id);
    const chip = (depId) => {
      const status = state.tasks.get(depId)?.status ?? 'unknown';
      return h('a', { class: `chip dep dep-${status}`, href: taskHash(depId), title: `${depId}: ${status.replace('_', ' ')}` }, depId);
    };
    replace(deps,
      h('div', { class: 'deps' }, h('span', { class: 'dep-label' }, 'blocked by'),
        task.blockedBy.length ? task.blockedBy.map(chip) : h('span', { class: 'empty' }, 'nothing')),
      h('div', { class: 'deps' }, h('span', { class: 'dep-label' }, 'blocks'),
        info?.blocks.length ? info.blocks.map(chip) : h('span', { class: 'empty' }, 'nothing')),
      info?.dead ? h('p', { class: 'dead-reason' }, `can never become ready: ${info.dead.join(' ← ')}`) : null,
      h('p', {}, h('a', { href: `#tasks?focus=${encodeURIComponent(task.id)}`, id: 'focus-graph' }, 'its neighbourhood in the dependency graph')));
  }

  function drawTimeline() {
    if (!events) return replace(timeline, h('li', { class: 'empty' }, 'loading…'));
    if (events.error) return replace(timeline, h('li', { class: 'failure' }, `could not load the timeline: ${events.error}`));
    replace(timeline, events.map((e) => {
      const t = e.data || {};
      const bits = [t.status?.replace('_', ' ')];
      if (t.claimedBy && e.type === 'task.claimed') bits.push(`by ${t.claimedBy}`);
      if (e.type === 'task.expired' || e.type === 'task.released') bits.push(`attempts ${t.attempts}/${t.maxAttempts}`);
      if (t.owner) bits.push(`owner ${t.owner}`);
      return h('li', { class: 'event', 'data-type': e.type },
        h('time', { title: e.createdAt }, ago(e.createdAt)), ' ',
        h('strong', {}, e.type.replace(/^task\./, '')), ' ', bits.filter(Boolean).join(' · '));
    }));
  }

  function drawMessages() {
    if (!messages) return replace(log, h('p', { class: 'empty' }, 'loading…'));
    if (messages.error) return replace(log, h('p', { class: 'failure' }, `could not load the messages: ${messages.error}`));
    const list = messages.messages;
    replace(log,
      h('p', { class: 'counts' }, `${messages.total} ${messages.total === 1 ? 'message' : 'messages'} about ${id}${messages.total > list.length ? ` (newest ${list.length})` : ''}`),
      h('ul', { class: 'detail-message-list' }, list.map((m) => h('li', { class: `msg-${m.type}`, 'data-seq': String(m.seq), 'data-type': m.type },
        h('time', { title: m.createdAt }, ago(m.createdAt)), ' ',
        h('strong', {}, m.from), ' → ', m.to, ' ', h('span', { class: 'type' }, m.type), ' ',
        h('span', { class: 'summary-text' }, m.summary),
        actions.answerButton(m)))));
  }

  function drawRuns(task) {
    const points = state.progress.get(task.id) ?? [];
    const from = Date.parse(task.createdAt);
    const to = task.status === 'in_progress' || task.status === 'pending' ? Infinity : Date.parse(task.updatedAt);
    const holder = task.claimedBy;
    const history = (state.testHistory?.runs ?? []).filter((r) => r.agent === holder && Date.parse(r.startedAt) >= from && Date.parse(r.startedAt) <= to);
    const rate = (value, gate) => h('span', { class: ['rate', (gate === false || value < GATE) ? 'rate-below' : 'rate-good'] }, percent(value));
    replace(runsBox,
      points.length
        ? h('table', { class: 'runs' },
          h('thead', {}, h('tr', {}, h('th', {}, 'time'), h('th', {}, 'report'), h('th', {}, 'iteration'), h('th', {}, 'pass rate'), h('th', {}, 'strategy'))),
          h('tbody', {}, points.slice().reverse().map((p) => h('tr', { class: `run-${p.kind}` },
            h('td', { title: p.at }, clock(p.at)), h('td', {}, p.kind), h('td', {}, String(p.iteration)),
            h('td', {}, rate(p.passRate, p.gate)), h('td', {}, p.strategy ?? '')))))
        : h('p', { class: 'empty' }, 'No impl_progress or test_result about this task yet.'),
      history.length
        ? [h('h4', {}, `Test-history runs by ${holder} (${state.testHistory.project}) since the task was created`),
          h('ul', {}, history.map((r) => h('li', {}, h('time', { title: r.startedAt }, clock(r.startedAt)), ' ', rate(r.passRate), ` ${r.passed} passed, ${r.failed} failed · tree ${r.tree.slice(0, 12)}`)))]
        : null);
  }

  function drawFix() {
    const fix = messages?.messages?.find((m) => hasFix(m.data));
    replace(fixBox, fix
      ? [h('p', { class: 'counts' }, `from ${fix.type} #${fix.seq} by ${fix.from} at ${clock(fix.createdAt)}`), changedFiles(fix.data), diffView(fix.data.diff)]
      : h('p', { class: 'empty' }, messages ? 'No fix with changed files reported for this task.' : 'loading…'));
  }

  state.on('tasks', () => {
    const task = id && state.tasks.get(id);
    if (!visible || !task) return;
    if (task.version !== shownVersion) {
      draw();
      reloadSoon();
    } else {
      drawDeps(task); // a blocker or a dependent changed
    }
  });
  state.on('messages', () => {
    const newest = state.messages.at(-1)?.seq ?? 0;
    const fresh = state.messages.filter((m) => m.seq > messagesSeen);
    messagesSeen = newest;
    if (visible && fresh.some((m) => m.data && (m.data.taskId === id || m.data.task === id))) reloadSoon();
  });
  state.on('progress', () => visible && id && state.tasks.get(id) && drawRuns(state.tasks.get(id)));

  return {
    open,
    /** Draws again (the token's role became known). */
    refresh: draw,
    visible(v) {
      visible = v;
      if (!v) setTitle('huddle');
      draw();
    },
    stop() {
      clearInterval(ticker);
      clearTimeout(reloadTimer);
      replace(root);
    },
  };
}
