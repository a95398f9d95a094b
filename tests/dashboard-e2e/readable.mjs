// What makes the page readable (tests/tests/dashboard/readable.rs seeds the team): every status
// and pass-rate pill keeps 4.5:1 contrast between its computed text colour and the background
// behind it (WCAG relative luminance), in the light and the dark theme; long names, types,
// summaries and memory keys wrap inside their container at 1440 and 390 px; and the log keeps
// the row being read in place when messages arrive while it holds fewer than 500 rows.
// HUDDLE_MESSAGES is the number of messages seeded, HUDDLE_LONG_NAME the long agent's name.

import { check, env, note, PATIENCE, rust, withBrowser } from './harness.mjs';

const MESSAGES = Number(env('HUDDLE_MESSAGES'));
const LONG_NAME = env('HUDDLE_LONG_NAME');
// A task in each status (seeded by tests/tests/dashboard/browser.rs) and what its page shows.
const TASKS = { 'TEST-002': 'pending', 'TEST-001': 'in_progress', 'TEST-008': 'completed', 'TEST-003': 'failed', 'TEST-007': 'cancelled' };
const PILLS = ['status-pending', 'status-in_progress', 'status-completed', 'status-failed', 'status-cancelled', 'rate-good', 'rate-below', 'rate-poor'];

/** In the page: each visible pill's text and background colours, opacity and contrast ratio. */
function measurePills() {
  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) throw new Error(`a colour this test cannot read: ${c}`);
    const [r, g, b, a = 1] = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return { r, g, b, a };
  };
  const over = (top, below) => ({
    r: top.r * top.a + below.r * (1 - top.a),
    g: top.g * top.a + below.g * (1 - top.a),
    b: top.b * top.a + below.b * (1 - top.a),
    a: 1,
  });
  // The colour behind `el`: its own background and its ancestors', composited down to an opaque one.
  const behind = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c.a > 0) layers.push(c);
      if (c.a >= 1) break;
    }
    return layers.reverse().reduce((below, top) => over(top, below), { r: 255, g: 255, b: 255, a: 1 });
  };
  const luminance = ({ r, g, b }) => [r, g, b].map((v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }).reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
  const opacity = (el) => {
    let o = 1;
    for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
    return o;
  };
  const out = [];
  for (const el of document.querySelectorAll('.status, .rate, .rate small')) {
    if (!el.getClientRects().length || el.closest('[hidden]')) continue;
    const bg = behind(el);
    const fg = over(parse(getComputedStyle(el).color), bg);
    const [hi, lo] = [luminance(fg), luminance(bg)].sort((x, y) => y - x);
    const pill = el.tagName === 'SMALL' ? el.parentElement : el;
    out.push({
      kind: [...pill.classList].find((c) => /^(status|rate)-/.test(c)) ?? 'unknown',
      text: el.textContent.trim(),
      ratio: (hi + 0.05) / (lo + 0.05),
      opacity: opacity(el),
      fg: getComputedStyle(el).color,
      bg: `rgb(${bg.r}, ${bg.g}, ${bg.b})`,
    });
  }
  return out;
}

/** In the page: what sticks out of its container in the messages, memory and agents views. */
function measureOverflow() {
  const out = [];
  const within = (el, box, what) => {
    const r = el.getBoundingClientRect();
    const b = box.getBoundingClientRect();
    if (r.right > b.right + 1 || r.left < b.left - 1) out.push(`${what} spans ${Math.round(r.left)}–${Math.round(r.right)} outside ${Math.round(b.left)}–${Math.round(b.right)}`);
  };
  const scrolls = (el, what) => {
    if (el.scrollWidth > el.clientWidth + 1) out.push(`${what} scrolls sideways (${el.scrollWidth} > ${el.clientWidth})`);
  };
  const doc = document.scrollingElement;
  if (doc.scrollWidth > innerWidth) out.push(`the page scrolls sideways (${doc.scrollWidth} > ${innerWidth})`);
  const view = document.querySelector('main > section.view:not([hidden])');
  for (const table of view.querySelectorAll('table')) {
    scrolls(table, `#${table.id || table.className}`);
    for (const cell of table.querySelectorAll('tr.msg td, tr[data-agent] td')) {
      if (!cell.getClientRects().length) continue;
      within(cell, table, `a cell of ${table.id} (${cell.textContent.slice(0, 30)}…)`);
      scrolls(cell, `a cell of ${table.id} (${cell.textContent.slice(0, 30)}…)`);
    }
  }
  for (const panel of view.querySelectorAll('.panel')) {
    scrolls(panel, 'a memory panel');
    for (const key of panel.querySelectorAll('.json-key, .json-string')) within(key, panel, `memory text ${key.textContent.slice(0, 30)}…`);
  }
  return out;
}

await withBrowser(async (page, { waitFor, shot, signIn }) => {
  await signIn();
  await waitFor(() => document.querySelector('#connection')?.dataset.state === 'live', null, 'live');
  const show = async (hash, ready, what, arg = null) => {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await waitFor(ready, arg, what);
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  };
  const logReady = () => document.querySelectorAll('#message-log tr.msg').length > 0 && document.querySelector('#message-log .rate') !== null;

  // Contrast, in both themes: every task status, and the pass rates of the log, the Pass-rate
  // table and a task's runs.
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    const pills = [];
    for (const [id, status] of Object.entries(TASKS)) {
      await show(`#/tasks/${id}`, ([i, st]) => document.querySelector(`#view-task .detail-title .status-${st}`) !== null
        && document.querySelector('#view-task .detail-title').textContent.includes(i), `${id}'s page`, [id, status]);
      if (id === 'TEST-003' || id === 'TEST-001') await waitFor(() => document.querySelector('#task-runs .rate') !== null, null, `${id}'s runs`);
      pills.push(...await page.evaluate(measurePills));
    }
    await show('#messages', logReady, 'the log with pass rates');
    pills.push(...await page.evaluate(measurePills));
    await show('#progress', () => document.querySelector('#progress-table tbody .rate') !== null, 'the Pass-rate table');
    pills.push(...await page.evaluate(measurePills));
    const kinds = new Set(pills.map((p) => p.kind));
    for (const kind of PILLS) check(kinds.has(kind), `a ${kind} pill was measured in ${scheme} (measured: ${[...kinds]})`);
    const poor = pills.filter((p) => p.ratio < 4.5 || p.opacity < 1);
    check(poor.length === 0, `every pill reaches 4.5:1 in ${scheme}: ${poor.map((p) => `${p.kind} "${p.text}" ${p.fg} on ${p.bg} = ${p.ratio.toFixed(2)}${p.opacity < 1 ? ` at opacity ${p.opacity}` : ''}`).join('; ')}`);
    note(`${pills.length} pills in ${scheme}, the lowest ${Math.min(...pills.map((p) => p.ratio)).toFixed(2)}:1`);
  }

  // Long names, types, summaries and memory keys wrap inside their containers.
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [size, width, height] of [['desktop', 1440, 900], ['mobile', 390, 844]]) {
      await page.setViewportSize({ width, height });
      await show('#messages', (name) => [...document.querySelectorAll('#message-log tr.msg .route')].some((r) => r.textContent.includes(name)), 'the long agent\'s row', LONG_NAME);
      const messages = await page.evaluate(measureOverflow);
      check(messages.length === 0, `the log at ${width} px (${scheme}): ${messages.join('; ')}`);
      await show('#memory', () => [...document.querySelectorAll('#memory-tree .json-key')].some((k) => k.textContent.length > 200), 'the long memory key');
      const memory = await page.evaluate(measureOverflow);
      check(memory.length === 0, `the memory at ${width} px (${scheme}): ${memory.join('; ')}`);
      // On a phone the agents' five columns scroll inside their own box (by design); on a
      // desktop the longest name wraps in its column.
      if (size === 'desktop') {
        await show('#agents', () => document.querySelectorAll('#agent-list tr[data-agent]').length >= 3, 'the agents');
        const agents = await page.evaluate(measureOverflow);
        check(agents.length === 0, `the agents at ${width} px (${scheme}): ${agents.join('; ')}`);
      }
      await show('#messages', logReady, 'the log');
      await shot(`readable-messages-${scheme}-${size}`);
    }
  }
  note('long rows and memory keys wrap at 1440 and 390 px, light and dark');

  // The log holds fewer than 500 rows; a reader halfway down it stays on the row they read.
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1440, height: 900 });
  await show('#messages', (n) => document.querySelectorAll('#message-log tr.msg').length >= n, `${MESSAGES} rows`, MESSAGES);
  const rows = await page.locator('#message-log tr.msg').count();
  check(rows < 500, `fewer than 500 rows (${rows})`);
  const where = () => page.evaluate(() => {
    const bar = document.querySelector('.topbar').getBoundingClientRect().bottom;
    const first = [...document.querySelectorAll('#message-log tr.msg')].find((r) => r.getBoundingClientRect().top >= bar);
    return { seq: first.dataset.seq, top: first.getBoundingClientRect().top, scrollY };
  });
  await page.evaluate(() => document.querySelectorAll('#message-log tr.msg')[Math.floor(document.querySelectorAll('#message-log tr.msg').length / 2)].scrollIntoView({ block: 'center' }));
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  const before = await where();
  check(before.scrollY > 0, 'the reader scrolled down the log');
  for (const [step, count] of [['post-message', 1], ['post-burst', 3]]) {
    const summaries = (await rust(step)).split(' ');
    check(summaries.length === count, `${count} new messages`);
    await waitFor((s) => s.every((text) => [...document.querySelectorAll('#message-log tr.msg .summary-text')].some((e) => e.textContent === text)), summaries, `${step}'s rows`);
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    const after = await page.evaluate((seq) => ({
      top: document.querySelector(`#message-log tr.msg[data-seq="${seq}"]`).getBoundingClientRect().top,
    }), before.seq);
    const now = await where();
    check(Math.abs(after.top - before.top) <= 1, `after ${step} the row read stays in place (row #${before.seq}: ${before.top} → ${after.top})`);
    check(now.seq === before.seq, `after ${step} the first row in view is still #${before.seq} (now #${now.seq})`);
  }
  note('the log kept its place as four messages arrived');
});
