// The team's agents: role, when each was last seen, what each holds, how much it said — in all
// its history: the server counts each agent's messages (`…/messages/search?from=NAME&limit=1`
// answers with `total`), asked again while the view is shown, and the stream adds what each
// sends meanwhile.

import { duration, h, replace } from './dom.js';

const ROLE_ORDER = ['lead', 'coordinator', 'tester', 'executor', 'observer'];
/** How often the server is asked again for the counts while the view is shown. */
const COUNT_REFRESH_MS = 30_000;

export function mountAgents(root, state, api) {
  let visible = false;
  const body = h('tbody');
  const count = h('span', { class: 'counts' });
  replace(root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Agents'), count),
    h('table', { class: 'agents', id: 'agent-list' },
      h('thead', {}, h('tr', {}, h('th', {}, 'name'), h('th', {}, 'role'), h('th', {}, 'last seen'), h('th', {}, 'holding'), h('th', { title: 'The worktree and fix branch of each held task (its workspace note on the bus)' }, 'workspace'), h('th', { title: 'Over the whole history, counted by the server' }, 'messages sent'), h('th', { title: 'Model tokens in the team\'s spend ledger' }, 'model tokens'))),
      body));
  // "12s ago" moves on its own.
  const ticker = setInterval(() => visible && draw(), 5000);
  // name → {total, asOf}: the server's count of the agent's messages up to its newest, `asOf`.
  const counted = new Map();
  let counting = null;
  let countedAt = 0;
  // name → tokens the agent's model calls used (the ledger's `byAgent`, its 100 largest).
  let tokens = new Map();

  /** Asks the server for every agent's count (one bounded request each, one round at a time). */
  function countSent() {
    if (counting || !visible) return;
    countedAt = Date.now();
    const names = [...state.agents.keys()];
    const spent = api.spend().then((report) => {
      tokens = new Map(report.byAgent.map((g) => [g.key, g.tokens]));
    });
    counting = Promise.all([spent, ...names.map((name) => api.searchMessages({ from: name, limit: 1 })
      .then((page) => counted.set(name, { total: page.total, asOf: page.messages[0]?.seq ?? 0 })))])
      .catch((err) => console.warn('huddle dashboard: counting messages failed:', err.message))
      .finally(() => {
        counting = null;
        draw();
      });
  }

  function draw() {
    if (!visible) return;
    const now = api.now();
    const holding = new Map();
    for (const t of state.tasks.values()) {
      if (t.status === 'in_progress' && t.claimedBy) {
        if (!holding.has(t.claimedBy)) holding.set(t.claimedBy, []);
        holding.get(t.claimedBy).push(t.id);
      }
    }
    // taskId → its newest workspace note (`impl_progress`, phase `workspace`).
    const places = new Map();
    for (const m of state.messages) {
      if (m.type === 'impl_progress' && m.data?.phase === 'workspace' && typeof m.data.taskId === 'string') places.set(m.data.taskId, m.data);
    }
    const since = Date.now() - countedAt;
    if (since > COUNT_REFRESH_MS || (since > 2000 && [...state.agents.keys()].some((n) => !counted.has(n)))) countSent();
    // The server's count, plus what the stream brought past the newest message it counted.
    const sent = new Map();
    for (const [name, c] of counted) sent.set(name, c.total);
    for (let i = state.messages.length - 1; i >= 0; i--) {
      const m = state.messages[i];
      const c = counted.get(m.from);
      if (!c) continue;
      if (m.seq <= c.asOf) continue;
      sent.set(m.from, sent.get(m.from) + 1);
    }

    const agents = [...state.agents.values()].sort((a, b) => ROLE_ORDER.indexOf(a.role) - ROLE_ORDER.indexOf(b.role) || (a.name < b.name ? -1 : 1));
    count.textContent = `${agents.length} agents`;
    replace(body, agents.length === 0 ? h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No agents yet.')) : agents.map((a) => {
      const seen = Date.parse(a.lastSeenAt);
      const ago = Number.isNaN(seen) ? 'never' : `${duration(now - seen)} ago`;
      const fresh = !Number.isNaN(seen) && now - seen < 60_000;
      return h('tr', { class: ['agent', a.revoked && 'revoked'], 'data-agent': a.name },
        h('td', {}, h('span', { class: ['presence', fresh && 'fresh'], 'aria-hidden': 'true' }), h('strong', {}, a.name), a.revoked ? h('span', { class: 'badge badge-dead' }, 'revoked') : null),
        h('td', {}, h('span', { class: `role role-${ROLE_ORDER.includes(a.role) ? a.role : 'other'}` }, a.role)),
        h('td', { title: a.lastSeenAt || 'never seen' }, ago),
        h('td', {}, (holding.get(a.name) || []).join(', ') || '—'),
        h('td', { class: 'workspace' }, (holding.get(a.name) || []).filter((id) => places.has(id)).map((id) => {
          const p = places.get(id);
          return h('span', { class: 'workspace-of', 'data-task': id, title: `${p.workspace} at ${p.base}` }, h('code', {}, p.branch));
        })),
        h('td', { class: 'num', 'data-sent': sent.has(a.name) ? String(sent.get(a.name)) : '' }, sent.has(a.name) ? String(sent.get(a.name)) : '…'),
        h('td', { class: 'num', 'data-tokens': String(tokens.get(a.name) ?? 0) }, String(tokens.get(a.name) ?? 0)));
    }));
  }

  state.on('agents', draw);
  state.on('tasks', draw);
  state.on('messages', draw);
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
