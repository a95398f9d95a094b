// Human gates in the page: a question for a person is a task `HUMAN-NNN` owned by `human`
// (metadata `gate.for` names the task it holds). A coordinator or a lead answers one (`POST …/answer`),
// or holds a pending task with a new question ("Ask a person", `POST …/gate`). Other roles may
// do neither (the daemon refuses them too), so they are not offered the forms. A person-only
// question is decided by a lead alone: other roles see that, not the buttons.

import { h, replace } from './dom.js';
import { taskHash } from './route.js';

const GATING_ROLES = new Set(['coordinator', 'lead']);
const MAX_TEXT = 4000;

/** Whether the token's role may gate and answer. */
export const mayGate = (me) => GATING_ROLES.has(me.role);

/** Whether only a lead may decide `question`. */
export const isPersonOnly = (question) => question.metadata?.gate?.personOnly === true;

/** Whether the token may answer `question`: a gating role, and a lead's for a person-only one. */
export const mayDecide = (me, question) => mayGate(me) && (!isPersonOnly(question) || me.role === 'lead');

/** What a token that may not decide `question` is shown in place of the form. */
export function decisionNote(question) {
  return h('p', { class: 'hint person-only' }, isPersonOnly(question)
    ? `Only a person decides ${question.id}: open the dashboard with a lead's token.`
    : `A coordinator or a lead answers ${question.id}.`);
}

/** A question for a person that nobody has answered yet. */
export function isOpenQuestion(task) {
  return Boolean(task && task.owner === 'human' && task.metadata?.gate && task.status === 'pending');
}

/** The id of the task a question holds, or null. */
export function heldBy(question) {
  const id = question.metadata?.gate?.for;
  return typeof id === 'string' ? id : null;
}

/** Whether `question` asks for a decision (approve or reject) rather than for words. */
export const asksForDecision = (question) => question.metadata?.gate?.kind === 'approval';

/**
 * A form answering `question`: on success the answered question goes into the state (and so
 * leaves every list of open questions). An approval gate gets Approve and Reject, its text an
 * optional reason (a rejection cancels the task with it); an open question, an answer.
 * `ids` gives the form and its box their element ids.
 */
export function answerForm(api, state, question, ids = {}) {
  const decides = asksForDecision(question);
  const box = h('textarea', {
    id: ids.text, class: 'answer-text', rows: 2, required: !decides, maxlength: MAX_TEXT,
    'aria-label': `${decides ? 'Reason for the decision on' : 'Answer to'} ${question.id}`,
    placeholder: decides ? 'A reason (optional; a rejection cancels the task with it)' : 'Your answer',
  });
  const buttons = decides
    ? [h('button', { type: 'submit', value: 'approve', class: 'approve' }, 'Approve'),
      h('button', { type: 'submit', value: 'reject', class: 'reject' }, 'Reject')]
    : [h('button', { type: 'submit' }, 'Answer')];
  const status = h('span', { class: 'action-status', role: 'status' });
  const form = h('form', {
    class: 'action-form answer-form', id: ids.form, 'data-question': question.id,
    onsubmit: async (e) => {
      e.preventDefault();
      const text = box.value.trim();
      const decision = decides ? (e.submitter?.value === 'reject' ? 'reject' : 'approve') : undefined;
      if (!text && !decides) return;
      buttons.forEach((b) => { b.disabled = true; });
      status.classList.remove('failure');
      status.textContent = decision ? `${decision === 'reject' ? 'rejecting' : 'approving'}…` : 'answering…';
      try {
        state.putTask(await api.answer(question.id, text, decision));
        status.textContent = `${question.id} ${decision ? `${decision}d` : 'answered'}.`;
      } catch (err) {
        status.textContent = `Not answered: ${err.message} (${err.code})`;
        status.classList.add('failure');
      } finally {
        buttons.forEach((b) => { b.disabled = false; });
      }
    },
  }, h('label', {}, `${decides ? 'Decide' : 'Answer'} ${question.id} `, box), ...buttons, status);
  return form;
}

/** The task detail's gate section: answer an open question, or ask a person about a pending task. */
export function mountGateActions(state, api, me) {
  let shown = null; // `${id} ${kind}` of what the section holds, so typing is not lost on redraw
  const body = h('div', {});
  const root = h('section', { class: 'panel actions gate-actions', id: 'gate-actions', 'aria-label': 'A person in the loop' }, body);

  function askForm(task) {
    const box = h('textarea', {
      id: 'gate-question', rows: 2, required: true, maxlength: MAX_TEXT,
      'aria-label': `Question to a person before ${task.id} is claimed`, placeholder: 'What must a person decide first?',
    });
    const approval = h('input', { type: 'checkbox', id: 'gate-approval' });
    const personOnly = h('input', { type: 'checkbox', id: 'gate-person-only' });
    const submit = h('button', { type: 'submit' }, 'Ask a person');
    const status = h('span', { class: 'action-status', id: 'gate-status', role: 'status' });
    return h('form', {
      class: 'action-form', id: 'gate-ask',
      onsubmit: async (e) => {
        e.preventDefault();
        const text = box.value.trim();
        if (!text) return;
        submit.disabled = true;
        status.classList.remove('failure');
        status.textContent = 'asking…';
        try {
          const gated = await api.gate(task.id, text, {
            kind: approval.checked ? 'approval' : undefined, personOnly: personOnly.checked,
          });
          state.putTask(gated.question);
          state.putTask(gated.task);
          box.value = '';
          status.textContent = `Asked as ${gated.question.id}; ${task.id} waits for the answer.`;
        } catch (err) {
          status.textContent = `Not asked: ${err.message} (${err.code})`;
          status.classList.add('failure');
        } finally {
          submit.disabled = false;
        }
      },
    }, h('label', {}, 'Question (markdown) ', box),
    h('label', { class: 'check' }, approval, ' approve or reject'),
    h('label', { class: 'check' }, personOnly, ' only a lead decides'), submit, status);
  }

  return {
    root,
    reset() {
      shown = null;
    },
    draw(task) {
      const kind = !task || !mayGate(me) ? null
        : isOpenQuestion(task) ? 'answer'
          : task.status === 'pending' && task.owner !== 'human' ? 'ask' : null;
      root.hidden = kind == null;
      const key = kind && `${task.id} ${kind} ${kind === 'answer' && mayDecide(me, task)}`;
      if (key === shown) return;
      shown = key;
      if (kind === 'answer') {
        const held = heldBy(task);
        replace(body,
          h('h3', {}, 'A person must answer this'),
          held ? h('p', {}, 'It holds ', h('a', { href: taskHash(held), class: 'task-id' }, held), ' until it is answered.') : null,
          mayDecide(me, task)
            ? answerForm(api, state, task, { form: 'gate-answer', text: 'gate-answer-text' })
            : decisionNote(task));
      } else if (kind === 'ask') {
        replace(body,
          h('h3', {}, 'Ask a person'),
          h('p', { class: 'hint' }, `No worker claims ${task.id} until the question is answered.`),
          askForm(task));
      } else {
        replace(body);
      }
    },
  };
}
