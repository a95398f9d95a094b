// A small, safe markdown renderer for what workers write (reports, descriptions): headings,
// paragraphs, lists, fenced code, pipe tables, **bold**, *italic*, `code` and http(s) links.
// It builds DOM nodes with `h` only: any HTML in the text stays text, no attribute comes from
// the input except a link's http(s) address.

import { h } from './dom.js';

/** Renders `text` as a `div.markdown`; anything not a string renders as nothing. */
export function markdown(text) {
  const root = h('div', { class: 'markdown' });
  if (typeof text !== 'string') return root;
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*$/.test(line)) {
      i += 1;
    } else if (/^\s*```/.test(line)) {
      const code = [];
      i += 1;
      while (i < lines.length && !/^\s*```/.test(lines[i])) code.push(lines[i++]);
      i += 1;
      root.append(h('pre', {}, h('code', {}, code.join('\n'))));
    } else if (/^#{1,6}\s/.test(line)) {
      const level = Math.min(6, line.match(/^#+/)[0].length + 2); // h3..h6: inside a card
      root.append(h(`h${Math.min(level, 6)}`, {}, inline(line.replace(/^#+\s*/, ''))));
      i += 1;
    } else if (/^\s*\|.*\|\s*$/.test(line) && i + 1 < lines.length && /^\s*\|[\s:|-]+\|\s*$/.test(lines[i + 1])) {
      const rows = [];
      rows.push(cells(line));
      i += 2;
      while (i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i])) rows.push(cells(lines[i++]));
      root.append(h('div', { class: 'table-scroll' }, h('table', {},
        h('thead', {}, h('tr', {}, rows[0].map((c) => h('th', {}, inline(c))))),
        h('tbody', {}, rows.slice(1).map((r) => h('tr', {}, r.map((c) => h('td', {}, inline(c)))))))));
    } else if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items = [];
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        items.push(h('li', {}, inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ''))));
        i += 1;
      }
      root.append(h(ordered ? 'ol' : 'ul', {}, items));
    } else {
      const para = [];
      while (i < lines.length && !/^\s*$/.test(lines[i]) && !/^(#{1,6}\s|\s*```|\s*([-*+]|\d+[.)])\s+)/.test(lines[i])) {
        para.push(lines[i++]);
      }
      root.append(h('p', {}, inline(para.join('\n'))));
    }
  }
  return root;
}

function cells(line) {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
}

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]+\]\([^)\s]+\))/;

/** Inline spans as nodes; the text between them stays text. */
function inline(text) {
  const out = [];
  let rest = text;
  for (;;) {
    const m = INLINE.exec(rest);
    if (!m) break;
    if (m.index > 0) out.push(rest.slice(0, m.index));
    const token = m[0];
    if (m[1]) out.push(h('code', {}, token.slice(1, -1)));
    else if (m[2]) out.push(h('strong', {}, inline(token.slice(2, -2))));
    else if (m[3]) out.push(h('em', {}, inline(token.slice(1, -1))));
    else out.push(link(token));
    rest = rest.slice(m.index + token.length);
  }
  if (rest) out.push(rest);
  return out;
}

/** `[text](url)`: a link only for an absolute http(s) address; otherwise the text as written. */
function link(token) {
  const [, label, url] = token.match(/^\[([^\]]+)\]\(([^)\s]+)\)$/);
  let parsed = null;
  try {
    parsed = new URL(url);
  } catch {
    // not an absolute address
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) return token;
  return h('a', { href: parsed.href, rel: 'noopener noreferrer nofollow', target: '_blank' }, label);
}
