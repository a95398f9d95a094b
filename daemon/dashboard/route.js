// The page's address: every view and its state (filters, selection, page) lives in the hash, so
// a link or a reload opens the same thing. `#tasks`, `#messages?type=fix_required&q=auth`,
// `#/tasks/TEST-001` (a task's detail).

export const VIEWS = ['tasks', 'messages', 'progress', 'agents', 'memory', 'webhooks'];

/** `{view, id, params}` of the current hash; unknown hashes show the tasks. */
export function currentRoute() {
  const [encoded, query] = splitOnce(location.hash.replace(/^#\/?/, ''), '?');
  let path = encoded;
  try {
    path = decodeURIComponent(encoded);
  } catch {
    // a malformed escape: taken as written
  }
  const params = Object.fromEntries(new URLSearchParams(query));
  const detail = path.match(/^tasks\/(.+)$/);
  if (detail) return { view: 'task', id: detail[1], params };
  return { view: VIEWS.includes(path) ? path : 'tasks', id: null, params };
}

/** The hash for a view and its state; empty values are left out. */
export function routeHash(view, params = {}) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '' && v != null && v !== false));
  const text = query.toString();
  return `#${view}${text ? `?${text}` : ''}`;
}

/** `#/tasks/ID` */
export function taskHash(id) {
  return `#/tasks/${encodeURIComponent(id)}`;
}

/**
 * Records a view's state in the address without a new history entry and without a
 * `hashchange` (the view already shows it). Only while that view is the one shown.
 */
export function saveViewState(view, params) {
  if (currentRoute().view !== view) return;
  const hash = routeHash(view, params);
  if (hash !== location.hash) history.replaceState(null, '', hash);
}

function splitOnce(text, sep) {
  const at = text.indexOf(sep);
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)];
}
