// The dashboard at a large history (tests/tests/dashboard/large.rs generates it through the API:
// HUDDLE_TASKS tasks, HUDDLE_MESSAGES messages): every view opens, a new event shows, the
// Pass-rate table pages, sorts and charts what is ticked, the graph says it shows a subset; then
// every view in light and dark, desktop and 390 px, screenshotted and checked for sideways
// scrolling. Timings are printed as `# figure <what> <ms>` lines, never asserted.

import { check, env, note, PATIENCE, rust, withBrowser } from './harness.mjs';

const TASKS = Number(env('HUDDLE_TASKS'));
const SHOWN_ROWS = 500;
const PAGE = 50;
const figure = (what, ms) => note(`figure ${what}: ${Math.round(ms)} ms`);

await withBrowser(async (page, { waitFor, shot, signIn }) => {
  // Long tasks (the main thread busy > 50 ms) over the whole run.
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push(e.duration);
    }).observe({ type: 'longtask', buffered: true });
  });

  let t = Date.now();
  await signIn();
  await waitFor((n) => [...document.querySelectorAll('.column .count')].reduce((sum, e) => sum + Number(e.textContent), 0) === n
    && document.querySelector('#connection')?.dataset.state === 'live', TASKS, 'every task on the board, live', 60_000);
  figure('page load and sign-in to the whole board, live', Date.now() - t);
  await page.locator('#graph-note', { hasText: /Showing 150 of \d+ tasks with dependencies/ }).waitFor({ timeout: PATIENCE });

  const open = async (view, ready, arg) => {
    const start = Date.now();
    await page.click(`.tabs a[data-view="${view}"]`);
    await waitFor(ready, arg, `the ${view} view`);
    figure(`open ${view}`, Date.now() - start);
  };
  await open('messages', (n) => document.querySelectorAll('#message-log tr.msg').length === n, SHOWN_ROWS);
  await open('progress', (n) => document.querySelectorAll('#progress-table tbody tr[data-task]').length === n, PAGE);
  await open('agents', () => document.querySelectorAll('#agent-list tr[data-agent]').length >= 3);
  await open('memory', () => document.querySelector('#memory-tree .json-key') !== null);
  await open('tasks', () => document.querySelectorAll('#board .card').length > 0);
  t = Date.now();
  await page.evaluate(() => { location.hash = '#/tasks/TEST-0042'; });
  await waitFor(() => document.querySelectorAll('#task-timeline li.event').length > 0 && document.querySelectorAll('#task-messages li').length > 0, null, 'the task detail');
  figure('open a task detail (timeline and messages)', Date.now() - t);

  // A new message reaches the log; a new report reaches the top of the Pass-rate table.
  // A reader scrolled down the log with some text selected: the new row on top moves neither.
  await page.click('.tabs a[data-view="messages"]');
  await waitFor((n) => document.querySelectorAll('#message-log tr.msg').length === n, SHOWN_ROWS, 'the log');
  const reading = await page.evaluate(() => {
    const row = document.querySelectorAll('#message-log tr.msg')[200];
    row.scrollIntoView({ block: 'center' });
    const text = row.querySelector('.summary-text');
    getSelection().selectAllChildren(text);
    return { seq: row.dataset.seq, top: row.getBoundingClientRect().top, selected: getSelection().toString() };
  });
  t = Date.now();
  const summary = await rust('post-message');
  await page.locator('#message-log tr.msg', { hasText: summary }).waitFor({ timeout: PATIENCE });
  figure('post a message to its row in the log (HTTP post included)', Date.now() - t);
  check((await page.locator('#message-log tr.msg').count()) === SHOWN_ROWS, 'the log keeps its row cap');
  const after = await page.evaluate((seq) => ({
    top: document.querySelector(`#message-log tr.msg[data-seq="${seq}"]`).getBoundingClientRect().top,
    selected: getSelection().toString(),
  }), reading.seq);
  check(after.selected === reading.selected && after.selected.length > 0, `the selection stays (${JSON.stringify(after.selected)})`);
  check(Math.abs(after.top - reading.top) <= 2, `the row read stays in place (${reading.top} → ${after.top})`);
  await page.evaluate(() => { getSelection().removeAllRanges(); window.scrollTo(0, 0); });
  await page.click('.tabs a[data-view="progress"]');
  t = Date.now();
  const reported = await rust('post-report');
  await page.locator('#progress-table tbody tr').first().filter({ hasText: reported }).waitFor({ timeout: PATIENCE });
  figure('post a test_result to the top of the Pass-rate table', Date.now() - t);

  // Filters and counts over the whole history, as the API answers them (not the newest 1,000
  // messages the page loaded).
  const expected = JSON.parse(await rust('api-counts'));
  await page.click('.tabs a[data-view="messages"]');
  const counts = page.locator('#view-messages .counts');
  await counts.filter({ hasText: `of ${expected.all} messages in all` }).waitFor({ timeout: PATIENCE });
  t = Date.now();
  await page.selectOption('#filter-type', 'fix_required');
  await counts.filter({ hasText: `${expected.fixRequired} matches in all messages` }).waitFor({ timeout: PATIENCE });
  figure('filter the log by type over the whole history', Date.now() - t);
  const firstPage = Math.min(100, expected.fixRequired);
  await waitFor((n) => document.querySelectorAll('#message-log tr.msg').length === n, firstPage, 'a page of fix_required rows');
  check((await page.locator('#message-log tr.msg:not([data-type="fix_required"])').count()) === 0, 'only fix_required rows');
  if (expected.fixRequired > 100) {
    await page.click('#search-older');
    await waitFor((n) => document.querySelectorAll('#message-log tr.msg').length === n, Math.min(200, expected.fixRequired), 'the next page of fix_required rows');
  }
  await page.selectOption('#filter-type', 'test_result');
  await page.selectOption('#filter-from', 'tester2');
  await counts.filter({ hasText: `${expected.tester2Results} matches in all messages` }).waitFor({ timeout: PATIENCE });
  check((await page.locator('#message-log tr.msg .route strong').allTextContents()).every((s) => s === 'tester2'), 'only tester2\'s rows');
  await page.selectOption('#filter-type', '');
  await page.selectOption('#filter-from', '');
  await counts.filter({ hasText: `of ${expected.all} messages in all` }).waitFor({ timeout: PATIENCE });
  await page.click('.tabs a[data-view="agents"]');
  for (const [name, sent] of Object.entries(expected.sent)) {
    await waitFor(([n, s]) => document.querySelector(`#agent-list tr[data-agent="${n}"] td[data-sent]`)?.dataset.sent === String(s),
      [name, sent], `${name} sent ${sent}`);
  }
  // A task's reports, however old: every one in its detail's runs table.
  await page.evaluate(() => { location.hash = '#/tasks/TEST-0042'; });
  await waitFor((n) => document.querySelectorAll('#task-runs table.runs tbody tr').length === n, expected.task42Reports,
    `TEST-0042's ${expected.task42Reports} reports in its detail`);
  note(`the log's filters and counts and the agents' messages sent equal the API's: ${JSON.stringify(expected)}`);
  await page.click('.tabs a[data-view="progress"]');

  // Paging, sorting, a chart for the ticked task only.
  // The table holds the tasks that reported in the messages the page loaded (the newest 1,000
  // and every one since), many pages of them.
  // Once every task that reported is in (the view's loads arrive one by one), so the page
  // count read below is the last one.
  await page.locator('#progress-count', { hasText: `${expected.progressTasks} tasks reported a pass rate` }).waitFor({ timeout: PATIENCE });
  await page.locator('#progress-page', { hasText: /page 1 of \d+/ }).waitFor({ timeout: PATIENCE });
  const pages = Number((await page.locator('#progress-page').textContent()).match(/of (\d+)/)[1]);
  check(pages > 2, `several pages of tasks (${pages})`);
  await page.click('#progress-pager [data-page="next"]');
  await page.locator('#progress-page', { hasText: `page 2 of ${pages}` }).waitFor({ timeout: PATIENCE });
  check(page.url().includes('page=2'), 'the page is in the address');
  await page.click('#progress-table [data-sort="rate"]');
  await page.click('#progress-table [data-sort="rate"]');
  await waitFor(() => document.querySelector('#progress-table th[aria-sort="ascending"] [data-sort="rate"]') !== null, null, 'sorted by rate, ascending');
  const rates = await page.locator('#progress-table tbody tr .rate').allTextContents();
  const numbers = rates.map((r) => Number.parseFloat(r));
  check(numbers.every((n, i) => i === 0 || numbers[i - 1] <= n), `rates ascend: ${rates.slice(0, 5)}`);
  check(numbers[0] === expected.worstRate, `the worst first is the API's worst (${numbers[0]} vs ${expected.worstRate})`);
  const green = await page.locator('#progress-table tbody .rate').evaluateAll((els) => els
    .filter((e) => Number.parseFloat(e.textContent) < 95 && e.classList.contains('rate-good')).length);
  check(green === 0, `no rate below the gate shows green (${green} do)`);
  const first = await page.locator('#progress-table tbody tr').first().getAttribute('data-task');
  await page.locator('#progress-table tbody tr').first().locator('input[type="checkbox"]').check();
  await page.locator(`#charts .chart-card[data-task="${first}"]`).waitFor({ timeout: PATIENCE });
  check((await page.locator('#charts .chart-card').count()) === 1, 'one chart: the ticked task');
  check(page.url().includes(`sel=${first}`), 'the selection is in the address');
  // From the address: by id, ascending. TEST-0001 reported last in the oldest messages (TEST-0000
  // never did): each task's newest report over the whole history, from the server, brought it in.
  await page.evaluate(() => { location.hash = '#progress?sort=id&dir=asc'; });
  await page.locator('#progress-table tbody tr').first().filter({ hasText: 'TEST-0001' }).waitFor({ timeout: PATIENCE });
    note('the Pass-rate table pages, sorts and charts the ticked task');

  // The graph focused on one task's neighbourhood.
  await page.click('.tabs a[data-view="tasks"]');
  await page.fill('#graph-focus', 'TEST-0015');
  await page.press('#graph-focus', 'Enter');
  await page.locator('#graph-note', { hasText: 'TEST-0015 and its neighbourhood' }).waitFor({ timeout: PATIENCE });
  check((await page.locator('svg.graph .node').count()) < 150, 'the neighbourhood is a small part of the graph');
  check(page.url().includes('focus=TEST-0015'), 'the focus is in the address');

  const long = await page.evaluate(() => window.__longTasks);
  note(`figure long tasks (main thread > 50 ms) during the run: ${long.length}, longest ${Math.round(Math.max(0, ...long))} ms`);

  // Every view, light and dark, desktop and 390 px: no sideways scrolling.
  const views = ['tasks', 'messages', 'progress', 'agents', 'memory', '/tasks/TEST-0042'];
  for (const scheme of ['light', 'dark']) {
    for (const [size, width, height] of [['desktop', 1440, 900], ['mobile', 390, 844]]) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height });
      for (const v of views) {
        await page.evaluate((hash) => { location.hash = hash; }, `#${v}`);
        const id = v.startsWith('/tasks/') ? 'task' : v;
        await page.locator(`#view-${id}`).waitFor({ state: 'visible', timeout: PATIENCE });
        await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
        if (id === 'tasks') {
          // The board before the graph, and the Failed column within a few screens of the top.
          const at = await page.evaluate(() => ({
            board: document.querySelector('#board').getBoundingClientRect().top + scrollY,
            graph: document.querySelector('.graph-panel').getBoundingClientRect().top + scrollY,
            failed: document.querySelector('.column-failed').getBoundingClientRect().top + scrollY,
          }));
          note(`figure ${size} ${scheme}: board at ${Math.round(at.board)} px, Failed column at ${Math.round(at.failed)} px, graph at ${Math.round(at.graph)} px`);
          check(at.board < at.graph, `the board above the graph at ${width} px`);
          check(at.failed < 4 * height, `the Failed column within four screens at ${width} px (${Math.round(at.failed)} px)`);
        }
        const overflow = await page.evaluate(() => ({ scroll: document.scrollingElement.scrollWidth, inner: window.innerWidth }));
        check(overflow.scroll <= overflow.inner, `${id} at ${width} px (${scheme}) scrolls sideways: ${overflow.scroll} > ${overflow.inner}`);
        await shot(`large-${id}-${scheme}-${size}`);
      }
    }
  }
  note('every view in light and dark, desktop and 390 px, without sideways scrolling');
});
