// Keyboard navigation: 1–6 open the views, `a` goes to what waits on a person, `/` goes to the shown view's search or filter box,
// `j`/`k` move between the rows or cards of the shown view, Escape leaves a task's detail.
// Keys typed into a field are left alone.

import { VIEWS } from './route.js';

const ITEMS = '.view:not([hidden]) tr.msg, .view:not([hidden]) .card a.task-id, .view:not([hidden]) .progress-table a.task-id';

export function keyboard({ attention } = {}) {
  const onKey = (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const target = e.target;
    if (target instanceof HTMLElement && target.closest('input, textarea, select, [contenteditable]')) {
      if (e.key === 'Escape') target.blur();
      return;
    }
    if (/^[1-6]$/.test(e.key)) {
      location.hash = `#${VIEWS[Number(e.key) - 1]}`;
    } else if (e.key === 'a') {
      if (!attention?.()) return;
      e.preventDefault();
    } else if (e.key === '/') {
      const box = document.querySelector('.view:not([hidden]) input[type="search"]');
      if (!box) return;
      e.preventDefault();
      box.focus();
    } else if (e.key === 'j' || e.key === 'k') {
      const items = [...document.querySelectorAll(ITEMS)];
      if (!items.length) return;
      const at = items.indexOf(document.activeElement);
      const next = at < 0 ? 0 : Math.min(items.length - 1, Math.max(0, at + (e.key === 'j' ? 1 : -1)));
      items[next].focus();
      items[next].scrollIntoView({ block: 'nearest' });
    } else if (e.key === 'Escape' && location.hash.startsWith('#/tasks/')) {
      location.hash = '#tasks';
    } else {
      return;
    }
  };
  document.addEventListener('keydown', onKey);
  return () => document.removeEventListener('keydown', onKey);
}
