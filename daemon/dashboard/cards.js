// A task's card on the board (owner, holder, live lease countdown, attempts, blockers and what
// it blocks, why it can never be ready) and what decides whether a drawn card is still right.
// Long subjects and failure reasons are cut, with "show more". An in-progress card shows its fix
// cycle's latest iteration and pass rate; a completed one below the quality gate is not green.

import { GATE } from './chart.js';
import { capped, h, percent } from './dom.js';
import { isOpenQuestion } from './gates.js';
import { markdown } from './markdown.js';
import { taskHash } from './route.js';

const SUBJECT_CHARS = 200;
const REASON_CHARS = 300;

/** Changes whenever anything the card shows changes: the task, its neighbours' statuses, its
 * latest pass-rate point (`point`, from `state.progress`). */
export function cardKey(task, i, tasks, point) {
  const status = (id) => tasks.get(id)?.status;
  return [task.version, task.blockedBy.map(status).join(), i.blocks.map((id) => `${id}:${status(id)}`).join(), i.dead?.join() ?? '', i.unmet.length, point?.seq ?? ''].join('|');
}

/** Whether a completed task's result missed its gate (its own `qualityGate`, else 95 %). */
export function belowGate(task) {
  const r = task.result;
  if (task.status !== 'completed' || !r || typeof r.passRate !== 'number') return false;
  return r.qualityGatePassed === false || r.passRate < (typeof r.qualityGate === 'number' ? r.qualityGate : GATE);
}

/** "iteration 3/5 · 72.0 %": where an in-progress task's fix cycle stands. */
function cycle(point) {
  const of = point.maxIterations ? `/${point.maxIterations}` : '';
  const below = point.passRate < GATE;
  return h('p', { class: 'cycle' }, `iteration ${point.iteration}${of} · `,
    h('span', { class: ['rate', below ? (point.passRate < 70 ? 'rate-poor' : 'rate-below') : 'rate-good'] }, percent(point.passRate)));
}

/** The question (`HUMAN-NNN`) whose rejection cancelled `task`, or null. */
function rejectedBy(task, tasks) {
  if (task.status !== 'cancelled') return null;
  return task.blockedBy.map((id) => tasks.get(id))
    .find((q) => q && q.owner === 'human' && q.result?.decision === 'reject') ?? null;
}

/** Whether one of `task`'s blockers is an open question for a person. */
function waitsOnPerson(task, tasks) {
  return task.blockedBy.some((id) => isOpenQuestion(tasks.get(id)));
}

/** A task's card on the board; `point` is its latest pass-rate point, if any. */
export function card(task, info, tasks, point) {
  const i = info.get(task.id);
  const chip = (id) => {
    const status = tasks.get(id)?.status ?? 'unknown';
    return h('span', { class: `chip dep dep-${status}`, title: `${id}: ${status.replace('_', ' ')}` }, id);
  };
  let badge = null;
  const rejected = rejectedBy(task, tasks);
  if (i.dead && !rejected) {
    const root = i.dead.at(-1);
    badge = h('span', {
      class: 'badge badge-dead',
      title: `Can never become ready: ${i.dead.join(' ← ')} (${root} ${tasks.get(root).status})`,
    }, 'never ready');
  } else if (rejected) {
    badge = h('span', { class: 'badge badge-rejected', title: `A person rejected it at ${rejected.id}` }, 'rejected');
  } else if (task.status === 'pending' && waitsOnPerson(task, tasks)) {
    badge = h('span', { class: 'badge badge-person', title: 'Held until a person decides' }, 'waiting on a person');
  } else if (isOpenQuestion(task)) {
    // No worker claims a question: it waits on a person's answer, not on dependencies.
    badge = h('span', { class: 'badge badge-question', title: 'Waits for a person to answer' }, 'awaiting answer');
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

  const below = belowGate(task);
  // A question's text is what a person reads to answer it: rendered, as in the attention panel.
  const subject = isOpenQuestion(task) && task.description
    ? h('div', { class: 'subject question-text capped' }, markdown(task.description))
    : capped('p', { class: 'subject' }, task.subject, SUBJECT_CHARS);
  return h('article', { class: ['card', `card-${task.status}`, i.dead && 'card-dead', below && 'card-below-gate'], 'data-task': task.id },
    h('header', {}, h('a', { class: 'task-id', href: taskHash(task.id), title: `Open ${task.id}` }, task.id), badge),
    subject,
    task.status === 'in_progress' && task.activeForm ? h('p', { class: 'active-form' }, task.activeForm) : null,
    task.status === 'in_progress' && point ? cycle(point) : null,
    h('div', { class: 'facts' }, facts),
    task.blockedBy.length ? h('div', { class: 'deps' }, h('span', { class: 'dep-label' }, 'blocked by'), task.blockedBy.map(chip)) : null,
    i.blocks.length ? h('div', { class: 'deps' }, h('span', { class: 'dep-label' }, 'blocks'), i.blocks.map(chip)) : null,
    i.dead ? h('p', { class: 'dead-reason' }, `${i.dead.at(-1)} ${tasks.get(i.dead.at(-1)).status}${i.dead.length > 2 ? ` (via ${i.dead.slice(1, -1).join(', ')})` : ''}: this task can never become ready`) : null,
    task.failureReason ? capped('p', { class: 'failure' }, task.failureReason, REASON_CHARS) : null,
    task.status === 'completed' && task.result && typeof task.result.passRate === 'number'
      ? h('p', { class: 'result' }, 'pass rate ', h('span', { class: ['rate', below ? 'rate-below' : 'rate-good'] }, percent(task.result.passRate)),
        below ? ' below the gate' : null) : null);
}
