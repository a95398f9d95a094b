// The dashboard: sign in, load the team, follow both streams, route between the views.
// Every view is live: it redraws from the shared state when its topic changes.

import { clearSession, createApi, loadSession, teamPath, Unauthorized } from './api.js';
import { follow } from './sse.js';
import { createState } from './state.js';
import { showSignIn } from './signin.js';
import { h, replace } from './dom.js';
import { mountTasks } from './tasks.js';
import { mountMessages } from './messages.js';
import { mountAgents } from './agents.js';
import { mountMemory } from './memory.js';
import { mountProgress } from './progress.js';
import { mountTaskDetail } from './task-detail.js';
import { mountAttention } from './attention.js';
import { mountWebhooks } from './webhooks.js';
import { currentRoute, VIEWS } from './route.js';
import { keyboard } from './keys.js';
const AGENTS_REFRESH_MS = 10_000;
const $ = (id) => document.getElementById(id);

let running = null; // the signed-in session: {stop()}

function start(session) {
  let ended = false;
  const stops = [];
  const state = createState();

  const expire = () => {
    if (ended) return;
    ended = true;
    for (const stop of stops) stop();
    clearSession();
    running = null;
    showSignIn('Your token is no longer accepted (revoked or rotated). Sign in again.', start);
  };
  const api = createApi(session, expire);
  // Who this token is: the task detail offers only what its role may do (the daemon decides).
  const me = { name: null, role: null };
  api.me().then((who) => {
    Object.assign(me, who);
    views.task.refresh();
    attention.refresh();
    // Only a coordinator or a lead may read the webhooks; other roles are not offered the view.
    $('tab-webhooks').hidden = me.role !== 'coordinator' && me.role !== 'lead';
  }).catch(ignoreUnauthorized);

  $('team-name').textContent = session.team;
  $('app').hidden = false;

  const views = {
    tasks: mountTasks($('view-tasks'), state, api),
    messages: mountMessages($('view-messages'), state, api),
    progress: mountProgress($('view-progress'), state, api),
    agents: mountAgents($('view-agents'), state, api),
    memory: mountMemory($('view-memory'), state),
    task: mountTaskDetail($('view-task'), state, api, me),
    webhooks: mountWebhooks($('view-webhooks'), api),
  };
  const attention = mountAttention($('attention'), state, api, me);
  stops.push(() => attention.stop());
  const allViews = [...VIEWS, 'task'];

  // Snapshot, then follow: the streams' cursors first, then every task and the newest messages
  // from the API, then both streams from those cursors on, so a team with months of history
  // loads its current state, not its history; an item newer than the snapshot may arrive again
  // and is ignored (a task's version, a message's seq). "catching up…" until then.
  const refreshAgents = () => api.agents().then((list) => state.setAgents(list)).catch(ignoreUnauthorized);
  let memoryTimer = null;
  const refreshMemory = () => {
    clearTimeout(memoryTimer);
    memoryTimer = setTimeout(() => {
      Promise.all([api.memory(), api.memoryHistory()])
        .then(([memory, history]) => state.setMemory(memory, history))
        .catch(ignoreUnauthorized);
    }, 100);
  };
  let testHistoryTimer = null;
  const refreshTestHistory = () => {
    clearTimeout(testHistoryTimer);
    testHistoryTimer = setTimeout(() => {
      api.testHistory().then((h) => state.setTestHistory(h)).catch(ignoreUnauthorized);
    }, 100);
  };
  refreshAgents();
  refreshMemory();
  refreshTestHistory();
  const agentsTimer = setInterval(refreshAgents, AGENTS_REFRESH_MS);
  stops.push(() => clearInterval(agentsTimer), () => clearTimeout(memoryTimer), () => clearTimeout(testHistoryTimer));

  const followStreams = (cursors) => {
    const events = follow({
      path: teamPath(session.team, '/events'),
      after: cursors.events,
      token: session.token,
      onStatus: (s, note) => state.setConnection('events', s, note),
      onUnauthorized: expire,
      // Each event is `{seq, type, data, createdAt}`; task events carry the whole task.
      onEvent: ({ event, data: change }) => {
        if (event.startsWith('task.')) state.putTask(change.data);
        else if (event.startsWith('agent.')) state.agentEvent(event, change.data);
        else if (event === 'memory.updated') refreshMemory();
        else if (event === 'history.run') refreshTestHistory();
      },
    });
    const messages = follow({
      path: teamPath(session.team, '/messages/stream'),
      after: cursors.messages,
      token: session.token,
      onStatus: (s, note) => state.setConnection('messages', s, note),
      onUnauthorized: expire,
      onEvent: ({ event, data }) => {
        if (event === 'message') state.addMessage(data);
      },
    });
    stops.push(events.stop, messages.stop);
  };

  const SNAPSHOT_RETRY_MS = 2000;
  let snapshotTimer = null;
  const snapshot = async () => {
    state.setConnection('snapshot', 'catching up');
    try {
      const cursors = await api.cursors();
      const [tasks, recent] = await Promise.all([api.allTasks(), api.searchMessages({ limit: 1000 })]);
      if (ended) return;
      for (const task of tasks) state.putTask(task);
      state.loadMessages(recent.messages.slice().reverse());
      state.messageTotal = recent.total;
      followStreams(cursors);
      delete state.connection.snapshot;
      state.changed('connection');
    } catch (err) {
      if (ended || err instanceof Unauthorized) return;
      console.warn('huddle dashboard: loading the team failed, retrying:', err.message);
      state.setConnection('snapshot', 'retrying');
      snapshotTimer = setTimeout(snapshot, SNAPSHOT_RETRY_MS);
    }
  };
  stops.push(() => clearTimeout(snapshotTimer));
  snapshot();

  state.on('connection', () => drawConnection(state.connection, state.connectionNotes));
  drawConnection(state.connection);

  const show = () => {
    const route = currentRoute();
    for (const v of allViews) {
      $(`view-${v}`).hidden = v !== route.view;
      views[v].visible(v === route.view, route.params);
    }
    if (route.view === 'task') views.task.open(route.id);
    const tab = route.view === 'task' ? 'tasks' : route.view;
    for (const a of document.querySelectorAll('.tabs a')) {
      a.classList.toggle('active', a.dataset.view === tab);
      if (a.dataset.view === tab) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
  };
  window.addEventListener('hashchange', show);
  stops.push(keyboard({ attention: () => attention.focus() }));
  stops.push(() => window.removeEventListener('hashchange', show));
  for (const v of Object.values(views)) stops.push(() => v.stop?.());
  show();

  running = {
    stop() {
      if (ended) return;
      ended = true;
      for (const stop of stops) stop();
    },
  };
}

function ignoreUnauthorized(err) {
  if (!(err instanceof Unauthorized)) console.warn('huddle dashboard:', err.message);
}

function drawConnection(connection, notes = {}) {
  const statuses = Object.values(connection);
  const live = statuses.length > 0 && statuses.every((s) => s === 'live');
  const limited = statuses.some((s) => s === 'limited');
  const retrying = statuses.some((s) => s === 'retrying');
  const catchingUp = statuses.some((s) => s === 'catching up');
  const el = $('connection');
  const key = live ? 'live' : limited ? 'limited' : retrying ? 'retrying' : catchingUp ? 'catching-up' : 'connecting';
  el.dataset.state = key;
  const note = Object.values(notes)[0];
  const label = {
    live: 'live',
    limited: `not live: too many open streams${note ? ` (${note})` : ''}; close another huddle tab or raise the limit`,
    retrying: 'reconnecting…',
    'catching-up': 'catching up…',
    connecting: 'connecting…',
  }[key];
  el.setAttribute('role', limited ? 'alert' : 'status');
  replace(el, h('span', { class: 'dot', 'aria-hidden': 'true' }), label);
}

function boot() {
  $('signout').addEventListener('click', () => {
    running?.stop();
    running = null;
    clearSession();
    showSignIn('Signed out.', start);
  });
  const session = loadSession();
  if (session) start(session);
  else showSignIn('', start);
}

boot();
