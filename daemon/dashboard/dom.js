// DOM helpers. Everything the daemon sends (subjects, summaries, names, JSON) is untrusted text:
// it only ever reaches the page as text nodes or attribute values, never as markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

function build(node, props, children) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'text') node.textContent = String(value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** An HTML element: `h('td', {class: 'x'}, 'text', otherNode)`. */
export function h(tag, props, ...children) {
  return build(document.createElement(tag), props, children);
}

/** An SVG element, same signature as `h`. */
export function s(tag, props, ...children) {
  return build(document.createElementNS(SVG_NS, tag), props, children);
}

/** Replaces every child of `node`. */
export function replace(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

/** "12s", "3m 05s", "2h 04m". */
export function duration(ms) {
  const secs = Math.max(0, Math.floor(ms / 1000));
  if (secs < 60) return `${secs}s`;
  const mins = Math.floor(secs / 60);
  if (mins < 60) return `${mins}m ${String(secs % 60).padStart(2, '0')}s`;
  const hours = Math.floor(mins / 60);
  if (hours < 48) return `${hours}h ${String(mins % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d`;
}

/** "14:03:07" in local time, or the input when it is not a date. */
export function clock(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso ?? '') : d.toLocaleTimeString([], { hour12: false });
}

/** A percentage as shown everywhere: "96.0 %"; "—" when not a number. */
export function percent(value) {
  return typeof value === 'number' && Number.isFinite(value) ? `${value.toFixed(1)} %` : '—';
}

/** Runs `fn` at most once per animation frame, however often it is asked for. */
export function coalesce(fn) {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      fn();
    });
  };
}

/**
 * An element holding untrusted `text`, cut at `limit` characters with a "show more" button that
 * shows the rest (and "show less" to cut it again). Text only, never markup.
 */
export function capped(tag, props, text, limit) {
  const full = String(text ?? '');
  if (full.length <= limit) return h(tag, props, full);
  const shown = document.createTextNode(`${full.slice(0, limit)}…`);
  const toggle = h('button', { type: 'button', class: 'quiet show-more', 'aria-expanded': 'false' }, 'show more');
  toggle.addEventListener('click', (e) => {
    e.stopPropagation();
    const open = toggle.getAttribute('aria-expanded') !== 'true';
    shown.textContent = open ? full : `${full.slice(0, limit)}…`;
    toggle.textContent = open ? 'show less' : 'show more';
    toggle.setAttribute('aria-expanded', String(open));
  });
  return h(tag, props, shown, ' ', toggle);
}

/** "3m 05s ago": how long ago `iso` was, by this computer's clock; the input when not a date. */
export function ago(iso, now = Date.now()) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return String(iso ?? '');
  return now - t < 1000 ? 'just now' : `${duration(now - t)} ago`;
}
