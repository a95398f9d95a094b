// The pass-rate charts (drawn by the Pass-rate view, progress.js). A task's chart: pass rate
// across fix-cycle iterations, `impl_progress` messages the iterations, `test_result` the outcome
// of a run; a new run of the same task (iterations starting over, after a retry) is its own line;
// the dashed line is the 95 % gate. The test-history chart: the pass rate of each full run the
// testers posted for the project posted to last (`GET /history`), oldest first.

import { clock, h, percent, s } from './dom.js';

const W = 360;
const H = 180;
const M = { top: 12, right: 14, bottom: 28, left: 40 };
export const GATE = 95;

/** 'good' at or above the gate (and not reported as failing it), 'below' under it, 'poor' under 70 %. */
export function grade(rate, gatePassed) {
  if (rate < 70) return 'poor';
  return rate >= GATE && gatePassed !== false ? 'good' : 'below';
}

/** Splits a task's points into runs: a run ends with its test_result or when iterations restart. */
function runs(points) {
  const out = [];
  let run = [];
  for (const p of points) {
    const prev = run[run.length - 1];
    const restarts = prev && (prev.kind === 'test_result' || (p.kind === 'impl_progress' && p.iteration <= prev.iteration && prev.kind === 'impl_progress'));
    if (restarts) {
      out.push(run);
      run = [];
    }
    run.push(p);
  }
  if (run.length) out.push(run);
  return out;
}

/** The test history's runs as one line: x is the run's place in the kept runs. */
export function historyCard(history) {
  const runs = history.runs;
  const n = runs.length;
  const x = (i) => M.left + (n === 1 ? 0.5 : i / (n - 1)) * (W - M.left - M.right);
  const y = (rate) => M.top + (1 - rate / 100) * (H - M.top - M.bottom);
  const grid = [0, 25, 50, 75, 100].map((r) => s('g', { class: 'gridline' },
    s('line', { x1: M.left, x2: W - M.right, y1: y(r), y2: y(r) }),
    s('text', { x: M.left - 6, y: y(r) + 4, class: 'tick', 'text-anchor': 'end', text: `${r}` })));
  const d = runs.map((r, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(r.passRate).toFixed(1)}`).join(' ');
  const latest = runs[n - 1];
  const change = history.passRateChange;
  return h('article', { class: 'history-card', 'data-project': history.project },
    h('header', {},
      h('span', { class: 'task-id' }, 'Test history'),
      h('span', { class: 'subject' }, history.project),
      h('span', { class: `rate rate-${grade(latest.passRate)}` }, percent(latest.passRate))),
    s('svg', {
      class: 'chart', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img',
      'aria-label': `test history of ${history.project}: pass rate over ${n} runs, latest ${percent(latest.passRate)}`,
    },
    grid,
    s('line', { class: 'axis', x1: M.left, x2: W - M.right, y1: y(0), y2: y(0) }),
    s('text', { class: 'axis-label', x: (M.left + W - M.right) / 2, y: H - 2, 'text-anchor': 'middle', text: 'full runs, oldest first' }),
    s('g', { class: 'run' },
      s('path', { class: 'series', d }),
      runs.map((r, i) => s('circle', { class: 'point history-point', cx: x(i), cy: y(r.passRate), r: 3.5 },
        s('title', { text: `run ${r.id}: ${percent(r.passRate)} (${r.passed} passed, ${r.failed + r.errors} failed) by ${r.agent} on ${r.tree.slice(0, 12)} at ${clock(r.startedAt)}` }))))),
    h('footer', {}, `${n} run${n === 1 ? '' : 's'} kept`,
      typeof change === 'number' ? ` · ${change >= 0 ? '+' : ''}${change.toFixed(1)} points since the first` : ''));
}

export function chartCard(id, points, task) {
  const all = runs(points);
  const latest = points[points.length - 1];
  const minX = Math.min(1, ...points.map((p) => p.iteration));
  const maxX = Math.max(minX + 1, ...points.map((p) => p.iteration), ...points.map((p) => p.maxIterations || 0));
  const x = (i) => M.left + ((i - minX) / Math.max(1, maxX - minX)) * (W - M.left - M.right);
  const y = (rate) => M.top + (1 - rate / 100) * (H - M.top - M.bottom);

  const grid = [0, 25, 50, 75, 100].map((r) => s('g', { class: 'gridline' },
    s('line', { x1: M.left, x2: W - M.right, y1: y(r), y2: y(r) }),
    s('text', { x: M.left - 6, y: y(r) + 4, class: 'tick', 'text-anchor': 'end', text: `${r}` })));
  const gate = s('g', { class: 'gate' },
    s('line', { x1: M.left, x2: W - M.right, y1: y(GATE), y2: y(GATE) }),
    s('text', { class: 'gate-label', x: W - M.right, y: y(GATE) + 11, 'text-anchor': 'end', text: `gate ${GATE} %` }));
  const step = Math.max(1, Math.ceil((maxX - minX) / 8));
  const xticks = [];
  for (let i = minX; i <= maxX; i += step) {
    xticks.push(s('text', { x: x(i), y: H - M.bottom + 16, class: 'tick', 'text-anchor': 'middle', text: String(i) }));
  }

  const lines = all.map((run, n) => {
    const older = n < all.length - 1;
    const d = run.map((p, i) => `${i ? 'L' : 'M'}${x(p.iteration).toFixed(1)},${y(p.passRate).toFixed(1)}`).join(' ');
    return s('g', { class: ['run', older && 'run-older'] },
      s('path', { class: 'series', d }),
      run.map((p) => {
        const label = `${p.kind === 'test_result' ? 'test result' : 'iteration'} ${p.iteration}: ${percent(p.passRate)}${p.strategy ? ` (${p.strategy})` : ''} at ${clock(p.at)}`;
        return p.kind === 'test_result'
          ? s('rect', {
            class: ['result-point', p.gate === true && 'gate-passed', p.gate === false && 'gate-failed'],
            x: x(p.iteration) - 5, y: y(p.passRate) - 5, width: 10, height: 10, transform: `rotate(45 ${x(p.iteration)} ${y(p.passRate)})`,
          }, s('title', { text: label }))
          : s('circle', { class: 'point', cx: x(p.iteration), cy: y(p.passRate), r: 3.5 }, s('title', { text: label }));
      }));
  });

  return h('article', { class: 'chart-card', 'data-task': id },
    h('header', {},
      h('span', { class: 'task-id' }, id),
      h('span', { class: 'subject' }, task ? task.subject : ''),
      h('span', { class: `rate rate-${grade(latest.passRate, latest.gate)}` }, percent(latest.passRate))),
    s('svg', {
      class: 'chart', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img',
      'aria-label': `${id}: pass rate over ${points.length} reports, latest ${percent(latest.passRate)}`,
    },
    grid,
    gate,
    s('line', { class: 'axis', x1: M.left, x2: W - M.right, y1: y(0), y2: y(0) }),
    xticks,
    s('text', { class: 'axis-label', x: (M.left + W - M.right) / 2, y: H - 2, 'text-anchor': 'middle', text: 'iteration' }),
    lines),
    h('footer', {}, `${all.length} run${all.length === 1 ? '' : 's'} · ${points.length} report${points.length === 1 ? '' : 's'}`,
      latest.kind === 'test_result' && latest.gate !== null ? ` · gate ${latest.gate ? 'passed' : 'not passed'}` : ''));
}
