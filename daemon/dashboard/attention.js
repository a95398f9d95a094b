// The attention panel, above every view: what waits on a person — every open question
// (`HUMAN-NNN`, owned by `human`) with its text, the task it holds and, for a coordinator, an
// answer box right there — and then what else needs a look (needs.js, need-row.js): unanswered
// `fix_required`, failed tasks, missed gates, regressions and errors, each acted on in place.
// Questions follow the task stream one task at a time (`state.onTask`): a change touches only
// the rows it concerns, and their count goes into the tab's title ("(2) huddle").

import { compareIds } from './deps.js';
import { coalesce, h, replace } from './dom.js';
import { answerForm, decisionNote, heldBy, isOpenQuestion, mayDecide, mayGate } from './gates.js';
import { markdown } from './markdown.js';
import { needRow } from './need-row.js';
import { BACKFILL, createNeeds, KINDS, SHOWN_PER_KIND } from './needs.js';
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
  const questionBox = h('div', { class: 'attention-questions' }, heading, hint, list);
  const needs = mountNeeds(state, api, me, () => showPanel());
  replace(root, questionBox, needs.root);

  function showPanel() {
    questionBox.hidden = questions.size === 0;
    root.hidden = questions.size === 0 && needs.count() === 0;
  }

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
    showPanel();
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
      needs.refresh();
    },
    /** Signed out: nothing of this team stays in the page or the title. */
    stop() {
      stopped = true;
      needs.stop();
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

/**
 * The "Needs a look" part of the panel: its rows redrawn once a frame when the tasks or messages
 * change, a row kept (and what is typed in it) while its item is unchanged. `onChange` runs after
 * each redraw.
 */
function mountNeeds(state, api, me, onChange) {
  const model = createNeeds(state, api);
  const dismissed = new Set();
  const rows = new Map(); // key → {el, sig}
  let order = '';
  let total = 0;
  let stopped = false;
  const count = h('span', { class: 'count', id: 'attention-needs-count' });
  const list = h('ul', { class: 'attention-list', id: 'attention-needs' });
  const more = h('p', { class: 'hint', id: 'attention-needs-more' });
  const root = h('div', { class: 'attention-needs', hidden: true },
    h('h2', { id: 'attention-needs-title' }, 'Needs a look ', count), list, more);

  const act = {
    async answer(item, text) {
      const m = item.message;
      const sent = await api.postMessage({ to: m.from, type: 'fix_answer', summary: text,
        data: { ...(item.taskId ? { taskId: item.taskId } : {}), replyTo: m.seq, answer: text } });
      // Gone from the list now; the stream brings the answer to the log in its order.
      model.take(sent);
      draw();
      return `Answered (#${sent.seq}).`;
    },
    async retry(item) {
      const task = state.tasks.get(item.taskId) ?? await api.task(item.taskId);
      const updated = await api.patchTask(task.id, { status: 'pending' }, task.version);
      state.putTask(updated);
      await api.postMessage({ to: '*', type: 'task_action', summary: `${me.name} reopened ${task.id}`,
        data: { taskId: task.id, action: 'reopen', changes: { status: 'pending' } } });
      return `${task.id} is pending again.`;
    },
    dismiss(item) {
      dismissed.add(item.key);
      draw();
    },
  };

  const draw = coalesce(() => {
    if (stopped) return;
    model.follow();
    const byKind = model.items();
    const shown = [];
    total = 0;
    let hidden = 0;
    for (const kind of KINDS) {
      const open = byKind[kind].filter((i) => !dismissed.has(i.key));
      total += open.length;
      hidden += Math.max(0, open.length - SHOWN_PER_KIND);
      shown.push(...open.slice(0, SHOWN_PER_KIND));
    }
    const els = shown.map((item) => {
      const sig = `${item.seq} ${item.task?.version ?? ''} ${me.role}`;
      const known = rows.get(item.key);
      if (known?.sig === sig) return known.el;
      const el = needRow(item, me, act);
      if (known?.el.isConnected) known.el.replaceWith(el);
      rows.set(item.key, { el, sig });
      return el;
    });
    const keys = shown.map((i) => i.key).join();
    if (keys !== order) {
      order = keys;
      replace(list, els);
      for (const key of rows.keys()) if (!shown.some((i) => i.key === key)) rows.delete(key);
    }
    count.textContent = String(total);
    // Say what the list is drawn from when the team has more than the panel read.
    const partial = model.partial().map((p) => `the newest ${BACKFILL} of ${p.total} ${p.type}`).join(', ');
    more.textContent = [
      hidden ? `${hidden} more not shown (the newest ${SHOWN_PER_KIND} of each kind are); the task board and the log have the rest.` : '',
      partial ? `Counted from ${partial} messages; the log's type filter has every one.` : '',
    ].filter(Boolean).join(' ');
    root.hidden = total === 0;
    onChange();
  });

  state.on('tasks', draw);
  state.on('messages', draw);
  model.backfill().then(draw).catch((err) => console.warn('huddle dashboard: loading what needs a look failed:', err.message));
  return {
    root,
    count: () => total,
    refresh() {
      rows.clear();
      order = '';
      draw();
    },
    stop() {
      stopped = true;
    },
  };
}
