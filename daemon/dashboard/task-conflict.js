// Editing a task without losing anyone's change. Each edit form starts from the task as shown
// when the person began (`base`: its version and the form's fields); until they change a field
// the form follows the task live, and from then on Save sends only the fields they changed,
// with `If-Match` of the base version. When the daemon answers 412 (someone changed the task
// meanwhile) the conflict panel shows each field as it was, as it is now and as this person
// has it, and lets them save theirs over the new version or discard theirs.

import { clock, h, replace } from './dom.js';

/**
 * An edit form's starting point. `fields` are task field names, `read()` the form's values by
 * field (normalised as the task holds them), `fill(values)` puts values into the inputs.
 */
export function trackedForm(fields, read, fill) {
  let base = null; // {id, version, values}
  const pick = (task) => Object.fromEntries(fields.map((f) => [f, task[f] ?? null]));

  const form = {
    fields,
    get base() {
      return base;
    },
    /** The fields whose value differs from where the person started, with their new value. */
    changed() {
      if (!base) return {};
      const now = read();
      return Object.fromEntries(fields.filter((f) => now[f] !== base.values[f]).map((f) => [f, now[f]]));
    },
    dirty() {
      return Object.keys(form.changed()).length > 0;
    },
    /** Starts over from `task`: its values in the inputs, its version the base. */
    start(task) {
      base = { id: task.id, version: task.version, values: pick(task) };
      fill(base.values);
    },
    /** A newer version of the shown task: followed unless the person changed something. */
    follow(task) {
      if (!base || base.id !== task.id || (task.version > base.version && !form.dirty())) form.start(task);
    },
    /**
     * This page saved `updated` from `fromVersion` through another form: a form still based on
     * that version moves on with it (the save touched none of its fields), keeping its changes.
     */
    saved(updated, fromVersion) {
      if (!base || base.id !== updated.id) return;
      if (!form.dirty()) return form.start(updated);
      const same = fields.every((f) => (updated[f] ?? null) === base.values[f]);
      if (base.version === fromVersion && same) base = { ...base, version: updated.version };
    },
    /** "Save mine over it": `current` becomes the base, the person's changes stay in the form. */
    rebaseKeeping(current, mine) {
      form.start(current);
      fill({ ...base.values, ...mine });
    },
  };
  return form;
}

const LABELS = { subject: 'subject', description: 'description', owner: 'owner' };

/** The conflict panel of one task's actions; hidden until `show`. */
export function mountConflict() {
  const root = h('div', { class: 'conflict', id: 'action-conflict', role: 'alert', hidden: true });

  const value = (v) => (v == null || v === ''
    ? h('span', { class: 'empty' }, v == null ? 'none' : 'empty')
    : h('pre', { class: 'conflict-value' }, String(v)));

  return {
    root,
    hide() {
      root.hidden = true;
      replace(root);
    },
    /**
     * `form` met 412: it started from `form.base`, the task is now `current`, the person has
     * `mine` (their changed fields). `onMine` saves theirs over `current`, `onTheirs` discards.
     */
    show({ form, current, mine, onMine, onTheirs }) {
      const started = form.base;
      const rows = form.fields.filter((f) => f in mine || (current[f] ?? null) !== started.values[f]).map((f) => {
        const now = current[f] ?? null;
        const theirs = now !== started.values[f];
        const kind = f in mine && theirs ? 'both' : theirs ? 'theirs' : 'mine';
        return h('tr', { 'data-field': f, class: `conflict-${kind}` },
          h('th', { scope: 'row' }, LABELS[f] ?? f, h('small', {}, kind === 'both' ? 'changed by both' : kind === 'theirs' ? 'changed meanwhile' : 'changed by you')),
          h('td', { 'data-side': 'started' }, value(started.values[f])),
          h('td', { 'data-side': 'now' }, value(now)),
          h('td', { 'data-side': 'mine' }, f in mine ? value(mine[f]) : h('span', { class: 'empty' }, 'not changed')));
      });
      replace(root,
        h('p', {}, h('strong', {}, `${current.id} changed while you were editing.`),
          ` You started from version ${started.version}; it is now version ${current.version} (updated ${clock(current.updatedAt)}). Nothing of yours was saved yet.`),
        h('div', { class: 'table-scroll' }, h('table', { class: 'conflict-fields' },
          h('thead', {}, h('tr', {}, h('th', {}, 'field'), h('th', {}, `when you started (v${started.version})`), h('th', {}, `now (v${current.version})`), h('th', {}, 'yours'))),
          h('tbody', {}, rows))),
        h('p', { class: 'hint' }, `It is now ${current.status.replace('_', ' ')}, for ${current.owner ?? 'anyone'}.`),
        h('div', { class: 'action-row' },
          h('button', { type: 'button', 'data-choice': 'mine', onclick: onMine }, `Save mine over version ${current.version}`),
          h('button', { type: 'button', class: 'quiet', 'data-choice': 'theirs', onclick: onTheirs }, `Discard mine, keep version ${current.version}`)));
      root.hidden = false;
      root.scrollIntoView({ block: 'nearest' });
    },
  };
}
