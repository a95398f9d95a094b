// What a person does to a task from its detail, through the ordinary API and only what the
// token's role may (SECURITY.md): a coordinator or a lead cancels, reopens (status `pending`),
// reassigns (owner) and edits (subject, description) with `PATCH …/tasks/{id}`. The reassign and
// edit forms send only the fields the person changed, with `If-Match` of the version shown when
// they began, so a change made meanwhile is never overwritten unseen: on 412 the page shows what
// changed and the person chooses (task-conflict.js). Coordinators, testers and executors post a
// message to an agent or the team and answer a `fix_required` (a reply to its sender naming the
// task). Each edit is followed by a `task_action` message, so the log says who did what; the
// daemon sets every message's sender from the token, never from the page.

import { h, replace } from './dom.js';
import { isOpenQuestion } from './gates.js';
import { mountConflict, trackedForm } from './task-conflict.js';

const EDITING_ROLES = new Set(['coordinator', 'lead']);
const POSTING_ROLES = new Set(['coordinator', 'lead', 'tester', 'executor']);

export function mountTaskActions(state, api, me, currentId) {
  let task = null;
  let replyTo = null; // the fix_required message being answered: {seq, from}
  const status = h('p', { class: 'action-status', id: 'action-status', role: 'status' });
  const who = h('p', { class: 'action-who' });

  const button = (label, action, patch, verb) => h('button', {
    type: 'button', class: 'quiet', 'data-action': action,
    onclick: () => edit(action, patch(), verb, task?.version),
  }, label);
  // Cancelling cannot be taken back by its holder and fails every task that waits on it, so it
  // asks first; the version is the one shown when the person confirmed.
  const confirmCancel = h('div', { class: 'confirm', id: 'cancel-confirm', role: 'alertdialog', 'aria-label': 'Confirm cancel', hidden: true },
    h('p', { class: 'confirm-text' }),
    h('button', { type: 'button', class: 'reject', 'data-action': 'cancel-confirm', onclick: () => {
      confirmCancel.hidden = true;
      edit('cancel', { status: 'cancelled' }, 'cancelled', task?.version);
    } }, 'Yes, cancel it'),
    h('button', { type: 'button', class: 'quiet', 'data-action': 'cancel-keep', onclick: () => {
      confirmCancel.hidden = true;
      cancel.focus();
    } }, 'Keep it'));
  const cancel = h('button', { type: 'button', class: 'quiet', 'data-action': 'cancel', onclick: () => {
    if (!task) return;
    const waiting = [...state.tasks.values()].filter((t) => t.blockedBy.includes(task.id) && t.status === 'pending').length;
    confirmCancel.querySelector('.confirm-text').textContent = `Cancel ${task.id}?${task.status === 'in_progress' ? ` ${task.claimedBy ?? 'Its holder'} loses it.` : ''}${waiting ? ` ${waiting} waiting task${waiting === 1 ? '' : 's'} can then never become ready.` : ''}`;
    confirmCancel.hidden = false;
    confirmCancel.querySelector('[data-action="cancel-confirm"]').focus();
  } }, 'Cancel task');
  const reopen = button('Retry / reopen', 'reopen', () => ({ status: 'pending' }), 'reopened');

  const owner = h('input', { id: 'action-owner', placeholder: 'agent or role; empty: anyone', 'aria-label': 'New owner', spellcheck: 'false', autocapitalize: 'off' });
  const ownerForm = trackedForm(['owner'], () => ({ owner: owner.value.trim() || null }), (v) => { owner.value = v.owner ?? ''; });
  const reassign = h('form', { class: 'action-form', id: 'action-reassign', onsubmit: (e) => {
    e.preventDefault();
    save(ownerForm, 'reassign', (p) => (p.owner ? `reassigned to ${p.owner}` : 'left open to anyone'));
  } }, h('label', {}, 'Owner ', owner), h('button', { type: 'submit' }, 'Reassign'));

  const subject = h('input', { id: 'action-subject', 'aria-label': 'Subject', required: true });
  const description = h('textarea', { id: 'action-description', 'aria-label': 'Description', rows: 4 });
  const textForm = trackedForm(['subject', 'description'],
    () => ({ subject: subject.value.trim(), description: description.value }),
    (v) => { subject.value = v.subject ?? ''; description.value = v.description ?? ''; });
  const editForm = h('form', { class: 'action-form action-edit', id: 'action-edit', onsubmit: (e) => {
    e.preventDefault();
    save(textForm, 'edit', () => 'edited');
  } }, h('label', {}, 'Subject ', subject), h('label', {}, 'Description (markdown) ', description), h('button', { type: 'submit' }, 'Save'));
  const forms = [ownerForm, textForm];
  const conflict = mountConflict();

  const to = h('select', { id: 'action-to', 'aria-label': 'Send to' });
  const text = h('textarea', { id: 'action-message', 'aria-label': 'Message', rows: 2, required: true });
  const replyNote = h('span', { class: 'reply-note' });
  const messageForm = h('form', { class: 'action-form action-message', id: 'action-post', onsubmit: (e) => {
    e.preventDefault();
    post();
  } }, h('label', {}, 'To ', to), replyNote, h('label', {}, 'Message ', text), h('button', { type: 'submit' }, 'Send'));

  const editing = h('div', { class: 'action-row' }, cancel, reopen, confirmCancel);
  const root = h('section', { class: 'panel actions', id: 'task-actions', 'aria-label': 'Actions' },
    h('h3', {}, 'Act on this task'), who, editing, reassign, editForm, conflict.root, messageForm, status);

  function role() {
    return me.role ?? null;
  }

  function say(text, failed = false) {
    status.textContent = text;
    status.classList.toggle('failure', failed);
  }

  /**
   * PATCHes `patch` onto the task at `version` (the saving `form`, if any, starts again from the
   * result) and logs it; the task as saved, or null. A 412 calls `onStale` when given.
   */
  async function edit(action, patch, verb, version, form = null, onStale = null) {
    if (!task) return null;
    const id = task.id;
    say(`${verb}…`);
    let updated;
    try {
      updated = await api.patchTask(id, patch, version);
    } catch (err) {
      if (err.status === 412 && onStale) {
        await onStale();
        return null;
      }
      const why = err.status === 412 ? `${id} changed meanwhile; look at it again and retry` : `${err.message} (${err.code})`;
      say(`Not ${verb}: ${why}`, true);
      return null;
    }
    conflict.hide();
    for (const f of forms) {
      if (f === form) f.start(updated);
      else f.saved(updated, version);
    }
    state.putTask(updated);
    try {
      await api.postMessage({ to: '*', type: 'task_action', summary: `${me.name} ${verb} ${id}`, data: { taskId: id, action, changes: patch } });
      say(`${id} ${verb}.`);
    } catch (err) {
      say(`${id} ${verb}, but the log note failed: ${err.message}`, true);
    }
    return updated;
  }

  /** Saves what the person changed in `form`, from the version they started at. */
  async function save(form, action, verb) {
    if (!task || !form.base) return;
    const mine = form.changed();
    if (Object.keys(mine).length === 0) {
      say('Nothing changed: nothing to save.');
      return;
    }
    await edit(action, mine, verb(mine), form.base.version, form, () => stale(form, action, verb, mine));
  }

  /** Someone changed the task after `form` started: show what changed, let the person choose. */
  async function stale(form, action, verb, mine) {
    const id = form.base.id;
    let current;
    try {
      current = await api.task(id);
    } catch (err) {
      say(`Not saved: ${id} changed meanwhile, and reading it again failed: ${err.message}`, true);
      return;
    }
    state.putTask(current);
    say(`Not saved: ${id} changed meanwhile (now version ${current.version}). Choose below.`, true);
    conflict.show({
      form,
      current,
      mine,
      onMine: () => {
        form.rebaseKeeping(current, form.changed()); // what the person has now, over `current`
        save(form, action, verb);
      },
      onTheirs: () => {
        conflict.hide();
        form.start(state.tasks.get(id) ?? current);
        say(`Discarded your changes; showing version ${form.base.version}.`);
      },
    });
  }

  async function post() {
    if (!task) return;
    const body = text.value.trim();
    if (!body) return;
    const message = replyTo
      ? { to: replyTo.from, type: 'fix_answer', summary: body, data: { taskId: task.id, replyTo: replyTo.seq, answer: body } }
      : { to: to.value || '*', type: 'note', summary: body, data: { taskId: task.id } };
    say('sending…');
    try {
      const sent = await api.postMessage(message);
      say(`Sent #${sent.seq} to ${sent.to}.`);
      text.value = '';
      answer(null);
    } catch (err) {
      say(`Not sent: ${err.message} (${err.code})`, true);
    }
  }

  /** Points the message form at a `fix_required`'s sender (or back at the team with null). */
  function answer(m) {
    replyTo = m ? { seq: m.seq, from: m.from } : null;
    to.disabled = Boolean(m);
    replace(replyNote, m
      ? ['answering #', String(m.seq), ' from ', h('strong', {}, m.from), ' ', h('button', { type: 'button', class: 'quiet', onclick: () => answer(null) }, 'not an answer')]
      : []);
    if (m) {
      text.focus();
      messageForm.scrollIntoView({ block: 'nearest' });
    }
  }

  function recipients() {
    const names = ['*', ...[...state.agents.keys()].sort()];
    if (to.options.length === names.length) return;
    const chosen = to.value;
    replace(to, names.map((n) => h('option', { value: n }, n === '*' ? 'the whole team (*)' : n)));
    to.value = names.includes(chosen) ? chosen : '*';
  }

  return {
    root,
    /** A new task is shown: forms start from its values. */
    reset() {
      task = null;
      for (const form of forms) form.start({ id: null, version: null });
      conflict.hide();
      say('');
      answer(null);
      text.value = '';
      confirmCancel.hidden = true;
    },
    draw(next) {
      task = next;
      // A question for a person is answered (gates.js), not edited.
      root.hidden = !next || isOpenQuestion(next);
      if (root.hidden) return;
      const r = role();
      const canEdit = EDITING_ROLES.has(r);
      const canPost = POSTING_ROLES.has(r);
      who.textContent = r == null ? 'Checking what this token may do…'
        : `Signed in as ${me.name} (${r})${canEdit ? '' : canPost ? ': may post messages, not edit tasks' : ': may only watch'}.`;
      editing.hidden = !canEdit;
      reassign.hidden = !canEdit;
      editForm.hidden = !canEdit;
      messageForm.hidden = !canPost;
      cancel.hidden = ['cancelled', 'completed'].includes(next.status);
      if (cancel.hidden) confirmCancel.hidden = true;
      reopen.hidden = !['failed', 'cancelled', 'completed'].includes(next.status);
      for (const form of forms) form.follow(next);
      recipients();
    },
    /** An "answer" button for a `fix_required` row, for roles that may post. */
    answerButton(m) {
      if (m.type !== 'fix_required' || !POSTING_ROLES.has(role()) || currentId() == null) return null;
      return h('button', { type: 'button', class: 'quiet answer', 'data-answer': String(m.seq), onclick: () => answer(m) }, 'answer');
    },
  };
}
