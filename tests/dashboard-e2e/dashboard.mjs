// Drives the huddle dashboard in Debian's Chromium through playwright-core. Run by
// tests/tests/dashboard/main.rs, which owns the daemon and makes every change to the team.
//
// Protocol (one line each): this script prints `STEP <name>` when it needs the Rust side to do
// something and waits for `DONE <name> [text]` on stdin; `# …` lines are progress; `PASS` at
// the end. Any failure exits non-zero with the reason on stderr (and a failure screenshot).
//
// Env: HUDDLE_URL, HUDDLE_TEAM, HUDDLE_TOKEN (an observer's), HUDDLE_SCREENSHOTS (a directory),
// HUDDLE_CHROMIUM (default /usr/bin/chromium).

import { chromium } from 'playwright-core';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const URL_ = env('HUDDLE_URL');
const TEAM = env('HUDDLE_TEAM');
const TOKEN = env('HUDDLE_TOKEN');
const SHOTS = env('HUDDLE_SCREENSHOTS');
const CHROMIUM = env('HUDDLE_CHROMIUM', '/usr/bin/chromium');
/** For conditions that take as long as they take (a reconnect, a page load). */
const PATIENCE = 10_000;

// --- talking to the Rust side -------------------------------------------------------------
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function rust(step) {
  console.log(`STEP ${step}`);
  const { value, done } = await lines.next();
  if (done) throw new Error(`stdin closed while waiting for ${step}`);
  const prefix = `DONE ${step}`;
  if (!value.startsWith(prefix)) throw new Error(`expected "${prefix}", got "${value}"`);
  return value.slice(prefix.length).trim();
}
const note = (text) => console.log(`# ${text}`);
function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

// --- the browser ---------------------------------------------------------------------------
mkdirSync(SHOTS, { recursive: true });
rmSync(join(SHOTS, 'failure.png'), { force: true });
const profile = mkdtempSync(join(tmpdir(), 'huddle-dashboard-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1440, height: 900 },
  deviceScaleFactor: 1,
});
const page = context.pages()[0] ?? (await context.newPage());

const pageErrors = [];
const consoleText = [];
const requestUrls = [];
page.on('pageerror', (err) => pageErrors.push(`uncaught: ${err.message}`));
page.on('console', (msg) => {
  consoleText.push(msg.text());
  // A CSP refusal is a console error; so is any error the dashboard logs itself.
  if (/Content Security Policy|Refused to/i.test(msg.text())) pageErrors.push(`CSP: ${msg.text()}`);
});
// Each stream connection and the `Last-Event-ID` it resumed after.
const streamRequests = [];
page.on('request', (req) => {
  requestUrls.push(req.url());
  const path = new URL(req.url()).pathname;
  if (path.endsWith('/messages/stream') || path.endsWith('/events')) {
    streamRequests.push({ stream: path.endsWith('/events') ? 'events' : 'messages', lastEventId: req.headers()['last-event-id'] ?? null });
  }
});
const connections = (stream) => streamRequests.filter((r) => r.stream === stream);

const shot = async (name) => {
  await page.screenshot({ path: join(SHOTS, `dashboard-${name}.png`), fullPage: false });
  note(`screenshot dashboard-${name}.png`);
};
const view = async (name) => {
  await page.click(`.tabs a[data-view="${name}"]`);
  await page.locator(`#view-${name}`).waitFor({ state: 'visible', timeout: PATIENCE });
};
const card = (status, id) => page.locator(`.column[data-status="${status}"] .card[data-task="${id}"]`);
const waitFor = (fn, arg, what) => page.waitForFunction(fn, arg, { timeout: PATIENCE }).catch((e) => {
  throw new Error(`timed out waiting for ${what}: ${e.message.split('\n')[0]}`);
});

async function main() {
  // --- sign in ---------------------------------------------------------------------------
  await page.goto(URL_);
  await page.locator('#signin').waitFor({ state: 'visible', timeout: PATIENCE });
  await page.fill('#signin-team', TEAM);
  await page.fill('#signin-token', 'hud_not-a-real-token');
  await page.click('#signin-submit');
  await page.locator('#signin-message', { hasText: 'not accepted' }).waitFor({ timeout: PATIENCE });
  check(await page.locator('#app').isHidden(), 'a wrong token does not sign in');
  await shot('signin');

  await page.fill('#signin-token', TOKEN);
  await page.click('#signin-submit');
  await page.locator('#app').waitFor({ state: 'visible', timeout: PATIENCE });
  check((await page.inputValue('#signin-token')) === '', 'the token field is emptied after sign-in');
  note('signed in');

  // --- the page's SSE parser on the awkward cases the daemon may produce --------------------
  const parsed = await page.evaluate(async () => {
    const { SseParser } = await import('/dashboard/sse.js');
    const events = [];
    const parser = new SseParser((e) => events.push(e));
    // Lines split across chunks, CRLF split between chunks, a keep-alive comment, two data
    // lines, an id with no data (no event), a field with no space after the colon.
    for (const chunk of [': keep-alive\r\n\r', '\nid: 7\nevent: message\nda', 'ta: {"a":', '1}\n\n',
      'id: 8\n\n', 'id:9\ndata: one\ndata: two\r\n\r\n', 'id: 10\ndata: cut off']) parser.push(chunk);
    // A reconnect resumes after the last finished block, not the event cut off mid-way.
    return { events, lastId: parser.lastId };
  });
  check(JSON.stringify(parsed) === JSON.stringify({
    events: [{ id: '7', event: 'message', data: '{"a":1}' }, { id: '9', event: 'message', data: 'one\ntwo' }],
    lastId: '9',
  }), `the SSE parser: ${JSON.stringify(parsed)}`);

  // --- the board shows the existing tasks --------------------------------------------------
  await card('in_progress', 'TEST-001').waitFor({ timeout: PATIENCE });
  await card('pending', 'TEST-002').waitFor({ timeout: PATIENCE });
  await card('failed', 'TEST-003').waitFor({ timeout: PATIENCE });
  await card('completed', 'TEST-008').waitFor({ timeout: PATIENCE });
  await card('cancelled', 'TEST-007').waitFor({ timeout: PATIENCE });
  const held = card('in_progress', 'TEST-001');
  check((await held.textContent()).includes('claimed by tester'), 'TEST-001 shows who holds it');
  await held.locator('.lease', { hasText: /lease \d+m \d+s left|lease \d+s left/ }).waitFor({ timeout: PATIENCE });
  const leaseBefore = await held.locator('.lease').textContent();
  await waitFor((before) => document.querySelector('.card[data-task="TEST-001"] .lease')?.textContent !== before, leaseBefore, 'the lease countdown to move');
  check((await held.textContent()).includes('attempts 0/3'), 'TEST-001 shows attempts/maxAttempts');
  // TEST-004 waits on the failed TEST-003, TEST-005 on TEST-004: neither can ever be ready.
  await card('pending', 'TEST-004').locator('.badge-dead').waitFor({ timeout: PATIENCE });
  await card('pending', 'TEST-005').locator('.badge-dead').waitFor({ timeout: PATIENCE });
  check((await card('pending', 'TEST-005').textContent()).includes('via TEST-004'), 'TEST-005 names the chain to the failed task');
  check((await card('pending', 'TEST-002').locator('.badge-dead').count()) === 0, 'TEST-002 (waiting on a task in progress) is not marked');
  check((await card('pending', 'TEST-006').locator('.badge-ready').count()) === 1, 'TEST-006 is ready');
  check((await page.locator('svg.graph .node').count()) === 5, 'the graph draws the five tasks with dependencies');
  check((await page.locator('svg.graph .edge').count()) === 4, 'the graph draws the four blockedBy edges');
  check((await page.locator('svg.graph .edge-broken').count()) === 2, 'edges from failed or doomed blockers are marked broken');
  await shot('tasks');
  const huge = card('pending', 'TEST-009');
  check((await huge.boundingBox()).height < 400, 'a huge subject is cut on its card');
  check(!(await huge.textContent()).includes('END-OF-SUBJECT'), 'the end of the subject is hidden');
  await huge.locator('button.show-more').click();
  await huge.locator('.subject', { hasText: 'END-OF-SUBJECT' }).waitFor({ timeout: PATIENCE });
  check((await huge.locator('b').count()) === 0, 'markup in a subject stays text');
  await huge.locator('button.show-more').click();
  check(!(await huge.textContent()).includes('END-OF-SUBJECT'), 'show less cuts it again');
  await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });

  // --- messages: untrusted text stays text, a posted message appears within 1 s -----------
  await view('messages');
  const hostile = page.locator('#message-log tr.msg', { hasText: '<img src=x onerror=' });
  await hostile.waitFor({ timeout: PATIENCE });
  check((await hostile.locator('img, script').count()) === 0, 'a summary with markup creates no element');
  check((await page.title()) === 'huddle', 'no script from a summary ran');
  const result = page.locator('#message-log tr.msg-test_result', { hasText: 'auth: 48/50 passing' });
  check((await result.locator('.rate').textContent()).startsWith('96.0 %'), 'a test_result row shows its pass rate');

  const summary = await rust('post-message');
  await page.locator('#message-log tr.msg', { hasText: summary }).waitFor({ timeout: 1000 }).catch(() => {
    throw new Error('the message posted over HTTP did not appear within 1 s');
  });
  note('a posted message appeared within 1 s');
  check((await page.locator('#message-log tr.msg').first().textContent()).includes(summary), 'the newest message is on top');

  await page.selectOption('#filter-type', 'test_result');
  await waitFor(() => [...document.querySelectorAll('#message-log tr.msg')].every((r) => r.dataset.type === 'test_result'), null, 'only test_result rows');
  check((await page.locator('#message-log tr.msg').count()) === 2, 'two test_result messages');
  await page.selectOption('#filter-type', '');
  await page.selectOption('#filter-from', 'tester');
  await waitFor(() => {
    const senders = [...document.querySelectorAll('#message-log tr.msg .route strong')].map((s) => s.textContent);
    return senders.length > 0 && senders.every((s) => s === 'tester');
  }, null, 'only rows from tester');
  check((await page.locator('#message-log tr.msg').count()) === 13, 'the tester sent 13 of the messages');
  await page.selectOption('#filter-from', '');
  await result.click();
  const detail = page.locator('#message-log tr.msg-details', { hasText: '"passRate": 96' });
  await detail.waitFor({ timeout: PATIENCE });
  check((await detail.locator('.changed-files code').allTextContents()).join(' ') === 'src/auth.py tests/test_auth.py', 'the detail lists the changed files');
  check((await detail.locator('.changed-files code.test-file').textContent()) === 'tests/test_auth.py', 'a changed test file is marked');
  check((await detail.locator('.diff .diff-del').textContent()).startsWith('-assert token_ttl() == 60'), 'removed lines are marked');
  check((await detail.locator('.diff .diff-add').textContent()).includes('# <b>x</b>'), 'added lines are marked, markup stays text');
  check((await detail.locator('.diff b').count()) === 0, 'a diff creates no element');
  await shot('messages');

  // The search box asks the server, which searches every message of the team (not only those
  // this page keeps), with the filters; clearing it returns to the live log.
  await page.fill('#message-search', '48/50 auth');
  await page.locator('#view-messages .counts', { hasText: '1 match in all messages' }).waitFor({ timeout: PATIENCE });
  check(requestUrls.some((u) => u.includes('/messages/search?') && u.includes('q=48%2F50+auth')), 'the search went to the server');
  check((await page.locator('#message-log tr.msg').count()) === 1, 'one row for one match');
  check((await page.locator('#message-log tr.msg-test_result', { hasText: 'auth: 48/50 passing' }).count()) === 1, 'the match is the test result');
  await page.selectOption('#filter-type', 'fix_required');
  await page.locator('#view-messages .counts', { hasText: '0 matches in all messages' }).waitFor({ timeout: PATIENCE });
  await page.selectOption('#filter-type', '');
  await page.fill('#message-search', '');
  await waitFor(() => document.querySelectorAll('#message-log tr.msg').length > 1, null, 'the live log back');
  check(await page.locator('#search-older').isHidden(), 'no paging button in the live log');
  note('search found a message by its words on the server');

  // --- pass-rate chart -------------------------------------------------------------------
  await view('progress');
  const chart = page.locator('.chart-card[data-task="TEST-001"]');
  await chart.waitFor({ timeout: PATIENCE });
  check((await chart.locator('circle.point').count()) === 4, 'four impl_progress iterations for TEST-001');
  check((await chart.locator('rect.result-point.gate-passed').count()) === 1, 'its test_result passed the gate');
  check((await page.locator('.chart-card').count()) === 4, 'a chart per task that reported progress, the live one included');
  const trend = page.locator('.history-card[data-project="webapp"]');
  await trend.waitFor({ timeout: PATIENCE });
  check((await trend.locator('circle.history-point').count()) === 3, 'the test history: one point per kept run');
  check((await trend.locator('footer').textContent()).includes('+75.0 points since the first'), 'the test history says how the pass rate moved');
  await shot('progress');

  // --- agents ----------------------------------------------------------------------------
  await view('agents');
  for (const name of ['coordinator', 'tester', 'watcher']) {
    await page.locator(`#agent-list tr[data-agent="${name}"]`).waitFor({ timeout: PATIENCE });
  }
  check((await page.locator('#agent-list tr[data-agent="tester"]').textContent()).includes('TEST-001'), 'the tester holds TEST-001');
  check((await page.locator('#agent-list tr[data-agent="watcher"] .role').textContent()) === 'observer', 'roles are shown');
  check((await page.locator('#agent-list tr[data-agent="tester"] .workspace-of[data-task="TEST-001"]').textContent()) === 'huddle/TEST-001',
    'the Agents view shows the fix branch of the task the tester holds');
  await waitFor(() => document.querySelector('#agent-list tr[data-agent="tester"] td[data-tokens]')?.dataset.tokens === '150',
    null, "the tester's model tokens from the spend ledger");
  await shot('agents');

  // --- a task's detail: an observer reads it all and is offered no action --------------------
  await view('tasks');
  await page.click('.card[data-task="TEST-001"] a.task-id');
  await page.locator('#view-task .detail-title', { hasText: 'TEST-001' }).waitFor({ timeout: PATIENCE });
  check(page.url().endsWith('#/tasks/TEST-001'), 'the detail has its own address');
  await page.locator('#task-actions .action-who', { hasText: 'may only watch' }).waitFor({ timeout: PATIENCE });
  await page.locator('#view-task .spend', { hasText: '1 call, 150 tokens (120 prompt, 30 completion)' }).waitFor({ timeout: PATIENCE });
  for (const form of ['#action-edit', '#action-reassign', '#action-post', '[data-action="cancel"]']) {
    check(await page.locator(form).isHidden(), `an observer is not offered ${form}`);
  }
  await page.locator('#task-fix .changed-files').waitFor({ timeout: PATIENCE });
  check((await page.locator('#task-messages button.answer').count()) === 0, 'no answer button for an observer');

  // --- shared memory, live ---------------------------------------------------------------
  await view('memory');
  await page.locator('#memory-tree .json-key', { hasText: '"execution_results"' }).waitFor({ timeout: PATIENCE });
  check((await page.locator('#memory-history .change').count()) === 2, 'two changes in the history');
  await rust('patch-memory');
  await page.locator('#memory-history .change[data-version="3"]').waitFor({ timeout: PATIENCE });
  await page.locator('#memory-tree .json-key', { hasText: '"release"' }).waitFor({ timeout: PATIENCE });
  await shot('memory');

  // --- completing a task moves its card ----------------------------------------------------
  await view('tasks');
  await rust('complete-task');
  await card('completed', 'TEST-001').waitFor({ timeout: PATIENCE });
  check((await card('in_progress', 'TEST-001').count()) === 0, 'TEST-001 left the in-progress column');
  await card('pending', 'TEST-002').locator('.badge-ready').waitFor({ timeout: PATIENCE });
  note('TEST-001 moved to completed; TEST-002 became ready');

  // --- a dropped stream resumes from Last-Event-ID, nothing lost or repeated ---------------
  await view('messages');
  const expected = await rust('restart-daemon');
  const [count, last] = expected.split(' ');
  await page.locator('#message-log tr.msg', { hasText: last }).waitFor({ timeout: PATIENCE });
  await page.locator('#connection[data-state="live"]').waitFor({ timeout: PATIENCE });
  const rows = await page.locator('#message-log tr.msg').count();
  check(rows === Number(count), `after the restart the log holds ${count} messages, once each (it holds ${rows})`);
  check(requestUrls.some((u) => new URL(u).pathname.endsWith('/cursors')), 'the page read the streams\' cursors before its snapshot');
  check(Number(connections('messages')[0].lastEventId) > 0, 'the first message stream starts after the snapshot, not from the beginning');
  check(Number(connections('events')[0].lastEventId) > 0, 'the first event stream starts after the snapshot, not from the beginning');
  const resumedAfter = connections('messages').at(-1).lastEventId;
  check(resumedAfter === String(Number(count) - 1), `the message stream resumed after seq ${Number(count) - 1} (Last-Event-ID ${resumedAfter})`);
  check(Number(connections('events').at(-1).lastEventId) > 0, 'the event stream resumed with a Last-Event-ID');
  note('streams resumed after a daemon restart');

  // --- the token stays out of URLs, the DOM, storage other than this tab's, and the log -----
  check(!page.url().includes(TOKEN), 'the token is not in the page URL');
  check(requestUrls.every((u) => !u.includes(TOKEN)), 'the token is in no request URL');
  check(requestUrls.every((u) => new URL(u).origin === new URL(URL_).origin), 'every request goes to the daemon');
  const inDom = await page.evaluate((t) => document.documentElement.outerHTML.includes(t)
    || [...document.querySelectorAll('input')].some((i) => i.value.includes(t)), TOKEN);
  check(!inDom, 'the token is not in the DOM');
  check(await page.evaluate(() => localStorage.length === 0), 'nothing in localStorage');
  check(consoleText.every((t) => !t.includes(TOKEN)), 'the token is in no console message');

  // --- a revoked token sends the reader back to sign-in -----------------------------------
  await rust('revoke-token');
  await page.locator('#signin').waitFor({ state: 'visible', timeout: PATIENCE });
  check((await page.textContent('#signin-message')).includes('no longer accepted'), 'the sign-in view says why');
  check(await page.locator('#app').isHidden(), 'the dashboard is hidden');
  check(await page.evaluate(() => sessionStorage.length === 0), 'the token is gone from sessionStorage');
  await page.reload();
  await page.locator('#signin').waitFor({ state: 'visible', timeout: PATIENCE });
  note('a revoked token is sent back to sign-in');

  check(pageErrors.length === 0, `no script error and no CSP refusal: ${pageErrors.join('; ')}`);
}

try {
  await main();
  console.log('PASS');
} catch (err) {
  console.error(`dashboard e2e failed: ${err.stack || err}`);
  await page.screenshot({ path: join(SHOTS, 'failure.png') }).catch(() => {});
  process.exitCode = 1;
} finally {
  await context.close().catch(() => {});
  rmSync(profile, { recursive: true, force: true });
  process.stdin.destroy();
}
