// The attention panel: what waits on a person — every open question (`HUMAN-NNN`, owned by
// `human`) with its text, the task it holds and, for a coordinator, an answer box right there.
// It follows the task stream one task at a time (`state.onTask`): a change touches only the
// rows it concerns, and the count goes into the tab's title ("(2) huddle").

import { compareIds } from './deps.js';
import { h, replace } from './dom.js';
import { answerForm, decisionNote, heldBy, isOpenQuestion, mayDecide, mayGate } from './gates.js';
import { markdown } from './markdown.js';
import { taskHash } from './route.js';
import { setWaiting } from './title.js';

export function mountAttention(root, state, api, me) {
  const questions = new Map(); // id → the open question
  const rows = new Map(); // id → {el, key} of the row shown
  const dirty = new Set();
  let flushQueued = false;
  let stopped = false;

  const count = h('span', { class: 'count', id: 'attention-count' });
  const heading = h('h2', { id: 'attention-title', tabindex: '-1' }, 'Waiting on a person ', count);
  const list = h('ul', { class: 'attention-list', id: 'attention-list' });
  const hint = h('p', { class: 'hint', id: 'attention-hint' });
  replace(root, heading, hint, list);

  state.onTask((task) => {
    if (isOpenQuestion(task)) {
      questions.set(task.id, task);
      dirty.add(task.id);
    } else if (questions.delete(task.id)) {
      dirty.add(task.id);
    }
    // A held task's subject shows in its question's row.
    for (const q of questions.values()) if (heldBy(q) === task.id) dirty.add(q.id);
    if (dirty.size) queue();
  });

  function queue() {
    if (flushQueued) return;
    flushQueued = true;
    requestAnimationFrame(flush);
  }

  function flush() {
    flushQueued = false;
    if (stopped) return;
    for (const id of dirty) {
      const question = questions.get(id);
      const shown = rows.get(id);
      if (!question) {
        shown?.el.remove();
        rows.delete(id);
        continue;
      }
      const key = rowKey(question);
      if (shown?.key === key) continue;
      const el = row(question, shown?.el);
      if (shown) shown.el.replaceWith(el);
      else list.insertBefore(el, nextRow(id));
      rows.set(id, { el, key });
    }
    dirty.clear();
    const n = questions.size;
    root.hidden = n === 0;
    count.textContent = String(n);
    hint.textContent = mayGate(me)
      ? 'Answer here; the task it holds becomes claimable once its other blockers are done.'
      : 'A coordinator or a lead answers these here, with huddle answer, or through the API.';
    setWaiting(n);
  }

  function rowKey(q) {
    const held = heldBy(q);
    return `${q.version} ${held ? state.tasks.get(held)?.subject ?? '' : ''} ${mayDecide(me, q)}`;
  }

  /** The row after which `id` goes, in id order (null: at the end). */
  function nextRow(id) {
    let best = null;
    for (const [other, { el }] of rows) {
      if (compareIds(other, id) > 0 && (!best || compareIds(other, best.id) < 0)) best = { id: other, el };
    }
    return best?.el ?? null;
  }

  function row(q, previous) {
    const held = heldBy(q);
    const heldTask = held && state.tasks.get(held);
    const form = mayDecide(me, q) ? answerForm(api, state, q) : mayGate(me) ? decisionNote(q) : null;
    // Keep what was being typed when the row is redrawn.
    const typed = previous?.querySelector('textarea')?.value;
    if (form && typed) form.querySelector('textarea').value = typed;
    return h('li', { class: 'attention-item', 'data-question': q.id },
      h('p', { class: 'attention-head' },
        h('a', { href: taskHash(q.id), class: 'task-id' }, q.id), ' ',
        held
          // A holder's question (`gate.asker`) keeps its task in progress rather than holding it back.
          ? [q.metadata?.gate?.asker ? 'about ' : 'holds ', h('a', { href: taskHash(held), class: 'task-id held' }, held),
            heldTask ? h('span', { class: 'held-subject' }, ` ${heldTask.subject}`) : null]
          : null,
        q.metadata?.gate?.askedBy ? h('span', { class: 'asked-by' }, ` · asked by ${q.metadata.gate.askedBy}`) : null),
      h('div', { class: 'attention-question capped' }, markdown(q.description || q.subject)),
      form);
  }

  return {
    /** Draws every row again (the token's role became known). */
    refresh() {
      for (const id of questions.keys()) dirty.add(id);
      queue();
    },
    /** Signed out: nothing of this team stays in the page or the title. */
    stop() {
      stopped = true;
      replace(root);
      root.hidden = true;
      setWaiting(0);
    },
    /** Moves the keyboard to the first answer box, or the panel's heading. */
    focus() {
      if (root.hidden) return false;
      const box = root.querySelector('textarea') ?? heading;
      box.focus();
      box.scrollIntoView({ block: 'nearest' });
      return true;
    },
  };
}
