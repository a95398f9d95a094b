// Shared memory: the document as a collapsible JSON tree, and its recent changes (newest first),
// each change's patch a tree of its own.

import { clock, h, replace } from './dom.js';

/** Objects and arrays this deep start open. */
const OPEN_DEPTH = 3;

export function mountMemory(root, state) {
  let visible = false;
  const openPaths = new Map(); // tree path → open?
  const title = h('span', { class: 'counts' });
  const doc = h('div', { class: 'json-tree', id: 'memory-tree' });
  const history = h('ol', { class: 'history', id: 'memory-history' });
  replace(root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Shared memory'), title),
    h('div', { class: 'memory-layout' },
      h('section', { class: 'panel' }, h('h3', {}, 'Document'), doc),
      h('section', { class: 'panel' }, h('h3', {}, 'History'), history)));

  function draw() {
    if (!visible) return;
    const memory = state.memory;
    if (!memory) {
      title.textContent = 'loading…';
      return;
    }
    const last = state.history[0];
    title.textContent = `version ${memory.version}${last ? ` · last changed by ${last.agent} at ${clock(last.createdAt)}` : ''}`;
    replace(doc, tree(memory.doc, '$', 0, openPaths));
    replace(history, state.history.length === 0
      ? h('li', { class: 'empty' }, 'No changes yet.')
      : state.history.map((c) => h('li', { class: 'change', 'data-version': String(c.version) },
        h('div', { class: 'change-head' },
          h('strong', {}, `v${c.version}`), ' ', h('span', { class: `kind kind-${c.kind === 'replace' ? 'replace' : 'merge'}` }, c.kind),
          ' by ', h('strong', {}, c.agent), ' ', h('span', { class: 'time', title: c.createdAt }, clock(c.createdAt))),
        tree(c.patch, `v${c.version}`, 1, openPaths))));
  }

  state.on('memory', draw);
  return {
    visible(v) {
      visible = v;
      draw();
    },
    stop() {
      replace(root);
    },
  };
}

/**
 * A JSON value as nested `<details>`, `label` (the key, if any) inside each summary so a key and
 * its value share a line; `openPaths` remembers what the reader opened or closed.
 */
function tree(value, path, depth, openPaths, label = null) {
  if (value === null || typeof value !== 'object') return [label, scalar(value)];
  const isArray = Array.isArray(value);
  const entries = isArray ? value.map((v, i) => [i, v]) : Object.entries(value);
  if (entries.length === 0) return [label, h('span', { class: 'json-punct' }, isArray ? '[]' : '{}')];
  const open = openPaths.has(path) ? openPaths.get(path) : depth < OPEN_DEPTH;
  const details = h('details', {
    open,
    ontoggle: (e) => {
      if (e.target === details) openPaths.set(path, details.open);
    },
  },
  h('summary', {}, label, h('span', { class: 'json-punct' }, isArray ? `[ ${entries.length} ]` : `{ ${entries.length} }`)),
  h('ul', {}, entries.map(([k, v]) => h('li', {},
    tree(v, `${path}/${String(k).replace(/~/g, '~0').replace(/\//g, '~1')}`, depth + 1, openPaths, [
      h('span', { class: isArray ? 'json-index' : 'json-key' }, isArray ? String(k) : JSON.stringify(k)),
      h('span', { class: 'json-punct' }, ': '),
    ])))));
  return details;
}

function scalar(value) {
  const type = value === null ? 'null' : typeof value;
  return h('span', { class: `json-${type}` }, type === 'string' ? JSON.stringify(value) : String(value));
}
