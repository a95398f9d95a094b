// A fix's evidence as the tester posts it in `impl_progress` / `test_result` data
// (`changedFiles`, `testFilesChanged`, `diff`): the files, test files marked, and the unified
// diff line by line; a markdown report (`summary`) rendered safely. All of it untrusted text.

import { h } from './dom.js';
import { markdown } from './markdown.js';

/** Whether a message's data carries a fix's changed files and diff. */
export function hasFix(data) {
  return Boolean(data && typeof data === 'object' && Array.isArray(data.changedFiles) && data.changedFiles.length && typeof data.diff === 'string');
}

/** The changed files, test files marked. */
export function changedFiles(d) {
  const tests = new Set(Array.isArray(d.testFilesChanged) ? d.testFilesChanged : []);
  return h('div', { class: 'changed-files' }, 'Changed files: ',
    d.changedFiles.map((f) => h('code', { class: tests.has(f) && 'test-file', title: tests.has(f) ? 'a test file' : null }, String(f))));
}

/** A unified diff, a span per line classed by kind. */
export function diffView(diff) {
  const kind = (line) => {
    if (line.startsWith('+++') || line.startsWith('---')) return 'diff-file';
    if (line.startsWith('+')) return 'diff-add';
    if (line.startsWith('-')) return 'diff-del';
    if (line.startsWith('@@')) return 'diff-hunk';
    return null;
  };
  return h('pre', { class: 'diff' }, diff.split('\n').map((line) => h('span', { class: kind(line) }, `${line}\n`)));
}

/**
 * A message's data in its detail row: a worker's markdown report (`summary` of several lines)
 * rendered, a fix's changed files and diff, then the rest of the JSON as text.
 */
export function details(data) {
  const d = data && typeof data === 'object' && !Array.isArray(data) ? data : null;
  const report = d && typeof d.summary === 'string' && d.summary.includes('\n') ? d.summary : null;
  const parts = [];
  if (report) parts.push(markdown(report));
  if (hasFix(d)) parts.push(changedFiles(d), diffView(d.diff));
  if (!parts.length) return h('pre', {}, JSON.stringify(data, null, 2));
  const rest = { ...d };
  if (hasFix(d)) delete rest.diff;
  if (report) delete rest.summary;
  parts.push(h('pre', {}, JSON.stringify(rest, null, 2)));
  return parts;
}

