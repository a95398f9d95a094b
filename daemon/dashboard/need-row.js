// One row of the attention panel's "Needs a look" list (needs.js says what is in it): what
// happened, linked to its task, and the act that settles it right there — answer a
// `fix_required` (a `fix_answer` to its sender), retry a failed task or one that missed the gate
// (`PATCH` status `pending` at the version shown, then a `task_action` note), or dismiss it in
// this tab. Only what the token's role may do is offered; the daemon decides every request.

import { h, percent } from './dom.js';
import { taskHash } from './route.js';

const EDITING_ROLES = new Set(['coordinator', 'lead']);
const POSTING_ROLES = new Set(['coordinator', 'lead', 'tester', 'executor']);
const LABELS = { fix: 'fix required', failed: 'failed', gate: 'missed the gate', regression: 'regression', error: 'error' };

/** What the row says, after its label and task. */
function what(item) {
  const m = item.message;
  switch (item.kind) {
    case 'failed':
      return `${item.task.subject}${item.task.failureReason ? ` — ${item.task.failureReason}` : ''}`;
    case 'gate':
      return `${percent(m.data.passRate)} against a gate of ${item.gate} %${typeof item.was === 'number' ? ` (was ${percent(item.was)})` : ''} — ${m.summary}`;
    case 'regression':
      return `${percent(item.was)} → ${percent(m.data.passRate)} — ${m.summary}`;
    default:
      return `${m.summary}${m.data?.reason ? ` — ${m.data.reason}` : ''} (from ${m.from})`;
  }
}

/**
 * The row for `item`. `act.retry(item)` and `act.answer(item, text)` resolve to a status text or
 * throw; `act.dismiss(item)` hides it.
 */
export function needRow(item, me, act) {
  const status = h('span', { class: 'action-status', role: 'status' });
  const run = async (button, work) => {
    button.disabled = true;
    status.classList.remove('failure');
    status.textContent = '…';
    try {
      status.textContent = await work();
    } catch (err) {
      status.textContent = `Not done: ${err.message} (${err.code ?? 'error'})`;
      status.classList.add('failure');
    } finally {
      button.disabled = false;
    }
  };
  const controls = [];
  if (item.kind === 'fix' && POSTING_ROLES.has(me.role)) {
    const box = h('textarea', { class: 'answer-text', rows: 2, required: true, 'aria-label': `Answer to #${item.seq}`, placeholder: `Your answer to ${item.message.from}` });
    const send = h('button', { type: 'submit' }, 'Answer');
    controls.push(h('form', { class: 'action-form need-answer', onsubmit: (e) => {
      e.preventDefault();
      const text = box.value.trim();
      if (text) run(send, () => act.answer(item, text));
    } }, box, send));
  }
  if ((item.kind === 'failed' || item.kind === 'gate') && item.taskId && EDITING_ROLES.has(me.role)) {
    const retry = h('button', { type: 'button', 'data-act': 'retry', onclick: () => run(retry, () => act.retry(item)) }, 'Retry');
    controls.push(retry);
  }
  controls.push(h('button', { type: 'button', class: 'quiet', 'data-act': 'dismiss', title: 'Hide it in this tab', onclick: () => act.dismiss(item) }, 'Dismiss'));
  return h('li', { class: ['attention-item', `need-${item.kind}`], 'data-need': item.key, 'data-kind': item.kind, 'data-task': item.taskId ?? '' },
    h('p', { class: 'attention-head' },
      h('span', { class: `type need-label need-label-${item.kind}` }, LABELS[item.kind]), ' ',
      item.taskId ? h('a', { href: taskHash(item.taskId), class: 'task-id' }, item.taskId) : null, ' ',
      h('span', { class: 'need-what' }, what(item))),
    h('div', { class: 'need-actions' }, controls, status));
}
