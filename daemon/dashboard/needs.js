// What needs a person besides an open question (attention.js shows both): a `fix_required` no one
// answered, a task that failed, a task whose newest `test_result` missed the quality gate, a new
// regression (a task's newest pass rate below its previous one) and a new `error`. Built from the
// tasks and from messages of those types: the newest of each type from the server's search over
// the whole history when the page loads (not only the messages the log keeps), then the stream.

import { GATE } from './chart.js';

/** Newest messages of each type asked for at load: far more than a person works through at once. */
export const BACKFILL = 500;
const TYPES = ['fix_required', 'fix_answer', 'error', 'test_result'];
/** Rows of one kind shown at most; the panel says how many more there are. */
export const SHOWN_PER_KIND = 5;

/** The order of the kinds in the panel: what blocks work first. */
export const KINDS = ['fix', 'failed', 'gate', 'regression', 'error'];

export function createNeeds(state, api) {
  const fixes = new Map(); // seq → an unanswered fix_required
  const answered = new Set(); // seqs of fix_required some fix_answer replied to
  const errors = new Map(); // seq → error message
  const results = new Map(); // taskId → the two newest test_results, newest first
  let seenUpTo = 0;
  const beyond = []; // [{type, total}] of the types with more messages than the backfill read

  function take(m) {
    const d = m.data && typeof m.data === 'object' ? m.data : {};
    const taskId = typeof d.taskId === 'string' ? d.taskId : null;
    if (m.type === 'fix_required') {
      if (!answered.has(m.seq)) fixes.set(m.seq, m);
    } else if (m.type === 'fix_answer' && Number.isInteger(d.replyTo)) {
      answered.add(d.replyTo);
      fixes.delete(d.replyTo);
    } else if (m.type === 'error') {
      errors.set(m.seq, m);
    } else if (m.type === 'test_result' && taskId && typeof d.passRate === 'number') {
      const list = results.get(taskId) ?? [];
      if (list.some((r) => r.seq === m.seq)) return;
      list.push(m);
      list.sort((a, b) => b.seq - a.seq);
      results.set(taskId, list.slice(0, 2));
    }
  }

  /** Takes the messages the stream brought since last time. */
  function follow() {
    const msgs = state.messages;
    for (let i = msgs.length - 1; i >= 0 && msgs[i].seq > seenUpTo; i--) take(msgs[i]);
    seenUpTo = msgs.at(-1)?.seq ?? seenUpTo;
  }

  /** The newest of each type over the whole history; resolves once all have arrived. */
  async function backfill() {
    const pages = await Promise.all(TYPES.map((type) => api.searchMessages({ type, limit: BACKFILL })));
    // Answers first, so a fix_required already answered never shows.
    for (const page of [pages[1], pages[0], pages[2], pages[3]]) for (const m of page.messages) take(m);
    TYPES.forEach((type, i) => { if (pages[i].total > pages[i].messages.length) beyond.push({ type, total: pages[i].total }); });
  }

  /** Whether `m` (about `taskId`) is older than the task's newest test_result: handled since. */
  const superseded = (taskId, m) => (results.get(taskId)?.[0]?.seq ?? 0) > m.seq;

  /** Everything that needs a person now, by kind: `{kind → [{key, taskId, …}]}`, newest first. */
  function items() {
    const out = Object.fromEntries(KINDS.map((k) => [k, []]));
    const settled = (id) => ['completed', 'cancelled'].includes(state.tasks.get(id)?.status);
    for (const m of fixes.values()) {
      const taskId = typeof m.data?.taskId === 'string' ? m.data.taskId : null;
      if (taskId && settled(taskId)) continue;
      out.fix.push({ key: `fix-${m.seq}`, kind: 'fix', taskId, message: m, seq: m.seq });
    }
    for (const t of state.tasks.values()) {
      if (t.status === 'failed' && t.owner !== 'human') out.failed.push({ key: `failed-${t.id}`, kind: 'failed', taskId: t.id, task: t, seq: t.version });
    }
    for (const [taskId, [newest, previous]] of results) {
      const status = state.tasks.get(taskId)?.status;
      // Retried (pending, in progress) or failed (listed above): a person has it already.
      if (status && status !== 'completed') continue;
      const d = newest.data;
      const gate = typeof d.qualityGate === 'number' ? d.qualityGate : GATE;
      const was = previous?.data.passRate;
      const missed = d.qualityGatePassed === false || d.passRate < gate;
      if (missed) out.gate.push({ key: `gate-${newest.seq}`, kind: 'gate', taskId, message: newest, gate, was, seq: newest.seq });
      else if (typeof was === 'number' && d.passRate < was) out.regression.push({ key: `regression-${newest.seq}`, kind: 'regression', taskId, message: newest, was, seq: newest.seq });
    }
    for (const m of errors.values()) {
      const taskId = typeof m.data?.taskId === 'string' ? m.data.taskId : null;
      if (taskId && (superseded(taskId, m) || settled(taskId))) continue;
      out.error.push({ key: `error-${m.seq}`, kind: 'error', taskId, message: m, seq: m.seq });
    }
    for (const k of KINDS) out[k].sort((a, b) => b.seq - a.seq);
    return out;
  }

  /** The types whose older messages the panel did not read: `[{type, total}]`. */
  const partial = () => beyond;

  return { follow, backfill, items, take, partial };
}
