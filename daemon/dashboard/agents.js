// The team's agents: role, when each was last seen, what each holds, how much it said.

import { duration, h, replace } from './dom.js';

const ROLE_ORDER = ['lead', 'coordinator', 'tester', 'executor', 'observer'];

export function mountAgents(root, state, api) {
  let visible = false;
  const body = h('tbody');
  const count = h('span', { class: 'counts' });
  replace(root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Agents'), count),
    h('table', { class: 'agents', id: 'agent-list' },
      h('thead', {}, h('tr', {}, h('th', {}, 'name'), h('th', {}, 'role'), h('th', {}, 'last seen'), h('th', {}, 'holding'), h('th', {}, 'messages sent'))),
      body));
  // "12s ago" moves on its own.
  const ticker = setInterval(() => visible && draw(), 5000);

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
    const sent = new Map();
    for (const m of state.messages) sent.set(m.from, (sent.get(m.from) || 0) + 1);

    const agents = [...state.agents.values()].sort((a, b) => ROLE_ORDER.indexOf(a.role) - ROLE_ORDER.indexOf(b.role) || (a.name < b.name ? -1 : 1));
    count.textContent = `${agents.length} agents`;
    replace(body, agents.length === 0 ? h('tr', {}, h('td', { colspan: 5, class: 'empty' }, 'No agents yet.')) : agents.map((a) => {
      const seen = Date.parse(a.lastSeenAt);
      const ago = Number.isNaN(seen) ? 'never' : `${duration(now - seen)} ago`;
      const fresh = !Number.isNaN(seen) && now - seen < 60_000;
      return h('tr', { class: ['agent', a.revoked && 'revoked'], 'data-agent': a.name },
        h('td', {}, h('span', { class: ['presence', fresh && 'fresh'], 'aria-hidden': 'true' }), h('strong', {}, a.name), a.revoked ? h('span', { class: 'badge badge-dead' }, 'revoked') : null),
        h('td', {}, h('span', { class: `role role-${ROLE_ORDER.includes(a.role) ? a.role : 'other'}` }, a.role)),
        h('td', { title: a.lastSeenAt || 'never seen' }, ago),
        h('td', {}, (holding.get(a.name) || []).join(', ') || '—'),
        h('td', { class: 'num' }, String(sent.get(a.name) || 0)));
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
