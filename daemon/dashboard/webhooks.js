// The Webhooks view, for a coordinator (the only role the daemon lets read them): the team's
// registered webhooks and the newest deliveries — what was sent for which message or task, how
// it ended, after how many attempts, and the last error. Read-only (`huddle webhook …` and the
// API register and delete them). Reloaded every few seconds while shown; redrawn only when the
// answer changed, so a selection survives.

import { clock, h, replace } from './dom.js';
import { taskHash } from './route.js';

const RELOAD_MS = 3000;
const DELIVERIES_SHOWN = 100;

export function mountWebhooks(root, api) {
  let visible = false;
  let timer = null;
  let shownKey = null;

  const status = h('p', { class: 'counts', id: 'webhooks-status', role: 'status' });
  const hooks = h('div', { class: 'table-scroll', id: 'webhook-list' });
  const deliveries = h('div', { class: 'table-scroll', id: 'webhook-deliveries' });
  const section = (title, body) => h('section', { class: 'panel' }, h('h3', {}, title), body);
  replace(root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Webhooks'), status,
      h('button', { type: 'button', class: 'quiet', id: 'webhooks-reload', onclick: () => load() }, 'Reload')),
    section('Registered', hooks),
    section(`Newest deliveries (up to ${DELIVERIES_SHOWN})`, deliveries));

  async function load() {
    clearTimeout(timer);
    try {
      const [list, sent] = await Promise.all([api.webhooks(), api.webhookDeliveries(DELIVERIES_SHOWN)]);
      const key = JSON.stringify([list, sent]);
      if (key !== shownKey) {
        shownKey = key;
        draw(list, sent);
      }
      status.classList.remove('failure');
      status.textContent = `${list.length} ${list.length === 1 ? 'webhook' : 'webhooks'} · checked ${clock(new Date().toISOString())}`;
    } catch (err) {
      status.classList.add('failure');
      status.textContent = err.status === 403
        ? `Only a coordinator may see the team's webhooks (${err.message}).`
        : `Could not load the webhooks: ${err.message}`;
      if (err.status === 403) return; // asking again will not help
    }
    if (visible) timer = setTimeout(load, RELOAD_MS);
  }

  function draw(list, sent) {
    replace(hooks, list.length
      ? h('table', { class: 'webhooks' },
        h('thead', {}, h('tr', {}, ['id', 'address', 'sent for', 'registered by', 'at'].map((t) => h('th', {}, t)))),
        h('tbody', {}, list.map((w) => h('tr', { 'data-webhook': String(w.id) },
          h('td', {}, String(w.id)),
          h('td', { class: 'url' }, w.url),
          h('td', {}, w.events.join(', ')),
          h('td', {}, w.createdBy),
          h('td', { title: w.createdAt }, clock(w.createdAt))))))
      : h('p', { class: 'empty' }, 'No webhook is registered (huddle webhook add).'));
    replace(deliveries, sent.length
      ? h('table', { class: 'deliveries' },
        h('thead', {}, h('tr', {}, ['at', 'webhook', 'for', 'task', 'status', 'attempts', 'answer', 'last error'].map((t) => h('th', {}, t)))),
        h('tbody', {}, sent.map((d) => h('tr', { class: `delivery delivery-${d.status}`, 'data-delivery': String(d.id) },
          h('td', { title: d.at }, clock(d.at)),
          h('td', {}, String(d.webhookId)),
          h('td', {}, `${d.trigger} #${d.seq}`),
          h('td', {}, d.taskId ? h('a', { href: taskHash(d.taskId), class: 'task-id' }, d.taskId) : '—'),
          h('td', { class: 'delivery-status' }, d.status),
          h('td', { class: 'delivery-attempts' }, String(d.attempts)),
          h('td', {}, d.httpStatus == null ? '—' : String(d.httpStatus)),
          h('td', { class: 'delivery-error' }, d.error ?? '')))))
      : h('p', { class: 'empty' }, 'Nothing sent yet.'));
  }

  return {
    visible(v) {
      if (v === visible) return;
      visible = v;
      if (v) load();
      else clearTimeout(timer);
    },
    stop() {
      visible = false;
      clearTimeout(timer);
    },
  };
}
