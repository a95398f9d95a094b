// A task's verdict, first on its page: the pass rate against the quality gate and the counts of
// its last report (`test_result`), the tests still failing and why, the changed files with
// their diff, and every gate a person was asked — question, decision, answer, who and when.
// All of it untrusted text from workers and people, rendered as text.

import { clock, h, percent } from './dom.js';
import { changedFiles, diffView, hasFix } from './fix.js';
import { taskHash } from './route.js';

const FAILURES_SHOWN = 20;

/** The newest `test_result` about the task among `messages` (newest first), or null. */
export function lastReport(messages) {
  return (messages ?? []).find((m) => m.type === 'test_result' && m.data && typeof m.data === 'object') ?? null;
}

/** The verdict block, or null when there is neither a report nor a gate to show. */
export function verdictBlock(task, report, gates) {
  const d = report?.data ?? null;
  const parts = [];
  if (d) {
    const met = d.qualityGatePassed === true;
    const gate = typeof d.qualityGate === 'number' ? `${d.qualityGate} %` : 'the gate';
    parts.push(h('p', { class: 'verdict-line' },
      h('span', { class: ['rate', 'verdict-rate', met ? 'rate-good' : 'rate-below'] }, percent(d.passRate)), ' ',
      h('strong', { class: met ? 'verdict-met' : 'verdict-missed' }, met ? `gate met (${gate})` : `below the gate (${gate})`),
      typeof d.counts === 'string' ? ` · ${d.counts}` : null,
      ` · report #${report.seq} by ${report.from} at `, h('time', { title: report.createdAt }, clock(report.createdAt))));
    const failures = Array.isArray(d.failures) ? d.failures : [];
    if (failures.length) {
      parts.push(h('h4', {}, `Failing (${failures.length}${failures.length >= FAILURES_SHOWN ? '+' : ''})`),
        h('ul', { class: 'verdict-failures' }, failures.slice(0, FAILURES_SHOWN).map((f) => h('li', {},
          h('code', {}, String(f?.nodeid ?? '?')), f?.message ? [': ', h('span', { class: 'why' }, String(f.message))] : null))));
    }
    if (hasFix(d)) parts.push(changedFiles(d), diffView(d.diff));
  }
  const asked = Array.isArray(gates) ? gates : [];
  if (asked.length) {
    parts.push(h('h4', {}, 'A person was asked'),
      h('ul', { class: 'verdict-gates' }, asked.map(gateLine)));
  }
  if (!parts.length) return null;
  return h('section', { class: 'panel verdict', id: 'task-verdict', 'aria-label': `Verdict on ${task.id}` },
    h('h3', {}, 'Verdict'), parts);
}

function gateLine(g) {
  const decided = g.status === 'answered';
  const what = g.decision ?? (decided ? 'answered' : g.status);
  return h('li', { class: ['gate', `gate-${g.status}`, g.decision && `gate-${g.decision}`], 'data-gate': g.id },
    h('a', { href: taskHash(g.id), class: 'task-id' }, g.id), ' ',
    h('span', { class: 'gate-question' }, `“${g.question}”`), ' → ',
    h('strong', { class: 'gate-decision' }, what),
    decided && g.answeredBy ? [' by ', h('strong', {}, g.answeredBy)] : null,
    decided && g.answeredAt ? [' at ', h('time', { title: g.answeredAt }, clock(g.answeredAt))] : null,
    g.answer ? [': ', h('span', { class: 'gate-answer' }, `“${g.answer}”`)] : null,
    g.personOnly ? h('span', { class: 'hint' }, ' · a lead decides') : null,
    !decided && g.deadline ? h('span', { class: 'hint' }, ` · at ${g.deadline}: ${g.onDeadline ?? 'reject'} by default`) : null);
}
