// A coordinator in the dashboard: opens a task from a link (`#/tasks/TEST-003`), reads its
// detail — fields, blockers and dependents, timeline, messages, runs, the last fix — and acts:
// answers a fix_required, reopens, reassigns, edits (markdown stays safe), cancels, posts a
// message. The Rust side (tests/tests/dashboard/actions.rs) checks each action through the API
// (the task as stored, the message and who sent it). Env as dashboard.mjs; HUDDLE_TOKEN is a
// coordinator's.

import { check, note, PATIENCE, rust, withBrowser } from './harness.mjs';

await withBrowser(async (page, { waitFor, shot, signIn }) => {
  await signIn('#/tasks/TEST-003');
  const title = page.locator('#view-task .detail-title');
  await title.filter({ hasText: 'TEST-003' }).waitFor({ timeout: PATIENCE });
  check((await title.textContent()).includes('failed'), 'the detail shows the status');
  check((await page.locator('#view-task .detail-facts').textContent()).includes('sandbox unreachable'), 'the failure reason is shown');
  check((await page.locator('#view-task .detail-facts').textContent()).includes(' of 3'), 'attempts of max attempts');
  // Dependents are drawn from the board's tasks, which may still be loading when the task is.
  await page.locator('#view-task .detail-deps a.chip', { hasText: 'TEST-004' }).waitFor({ timeout: PATIENCE });
  await page.locator('#task-timeline li.event').nth(2).waitFor({ timeout: PATIENCE });
  const timeline = await page.locator('#task-timeline li.event').evaluateAll((els) => els.map((e) => e.dataset.type));
  check(JSON.stringify(timeline) === JSON.stringify(['task.failed', 'task.claimed', 'task.created']), `the timeline, newest first: ${timeline}`);
  check((await page.locator('#task-timeline li.event').first().textContent()).includes('failed'), 'the newest event shows the failure');
  await page.locator('#task-messages li[data-type="fix_required"]').waitFor({ timeout: PATIENCE });
  check((await page.locator('#task-messages li').count()) === 4, 'four messages about TEST-003');
  check((await page.locator('#task-runs tbody tr').count()) === 2, 'two fix iterations of TEST-003');
  check((await page.locator('#task-runs .rate-below').count()) === 2, '40 % and 35 % are below the gate');
  // The edit form shows once `/me` has given the role.
  await page.locator('#task-actions #action-edit').waitFor({ state: 'visible', timeout: PATIENCE });
  await shot('dashboard-task');

  // Answer the fix_required: a message to its sender, naming the task and the message.
  const fix = page.locator('#task-messages li[data-type="fix_required"]');
  const fixSeq = await fix.getAttribute('data-seq');
  await fix.locator('button.answer').click();
  check((await page.locator('#action-post .reply-note').textContent()).includes('tester'), 'the form says whom it answers');
  await page.fill('#action-message', 'The sandbox is back: retry against sandbox-2.');
  await page.click('#action-post button[type="submit"]');
  await page.locator('#action-status', { hasText: 'Sent' }).waitFor({ timeout: PATIENCE });
  await rust(`answered ${fixSeq}`);
  await page.locator('#task-messages li[data-type="fix_answer"]').waitFor({ timeout: PATIENCE });

  // Reopen: status pending, through PATCH; the log says who.
  await page.click('#task-actions [data-action="reopen"]');
  await title.filter({ hasText: 'pending' }).waitFor({ timeout: PATIENCE });
  await page.locator('#action-status', { hasText: 'reopened' }).waitFor({ timeout: PATIENCE });
  await rust('reopened');
  await page.locator('#task-timeline li.event').first().filter({ hasText: 'pending' }).waitFor({ timeout: PATIENCE });
  note('answered a fix_required and reopened TEST-003');

  // Another task by its link: the last fix's files and diff, the runs.
  await page.evaluate(() => { location.hash = '#/tasks/TEST-001'; });
  await title.filter({ hasText: 'TEST-001' }).waitFor({ timeout: PATIENCE });
  await page.locator('#task-fix .changed-files code').first().waitFor({ timeout: PATIENCE });
  check((await page.locator('#task-fix .changed-files code').allTextContents()).join(' ') === 'src/auth.py tests/test_auth.py', 'the last fix\'s files');
  check((await page.locator('#task-fix .diff .diff-add').textContent()).includes('# <b>x</b>'), 'the diff, markup as text');
  check((await page.locator('#task-fix .diff b').count()) === 0, 'no element from the diff');
  check((await page.locator('#task-runs tbody tr').count()) === 5, 'four iterations and a test result');
  check((await page.locator('#task-runs tr.run-test_result .rate-good').count()) === 1, '96 % passed the gate');

  // Reassign, edit (markdown with markup), cancel, post — TEST-006.
  await page.evaluate(() => { location.hash = '#/tasks/TEST-006'; });
  await title.filter({ hasText: 'TEST-006' }).waitFor({ timeout: PATIENCE });
  await page.fill('#action-owner', 'executor-1');
  await page.click('#action-reassign button[type="submit"]');
  await page.locator('#view-task .detail-facts', { hasText: 'executor-1' }).waitFor({ timeout: PATIENCE });
  await rust('reassigned');

  await page.fill('#action-subject', 'Lint the fixtures (eslint 9)');
  await page.fill('#action-description', '## Why\n\nThe **fixtures** drifted. <img src=x onerror="document.title=\'pwned\'">\n\n- `eslint .`\n- [guide](https://eslint.org/docs)\n- [bad](javascript:alert(1))');
  await page.click('#action-edit button[type="submit"]');
  await title.filter({ hasText: 'eslint 9' }).waitFor({ timeout: PATIENCE });
  const description = page.locator('#view-task .detail-head .markdown');
  await description.locator('strong', { hasText: 'fixtures' }).waitFor({ timeout: PATIENCE });
  check((await description.locator('img, script').count()) === 0, 'markup in a description creates no element');
  check((await description.locator('a').count()) === 1, 'only the http(s) link is a link');
  check((await description.locator('a').getAttribute('href')) === 'https://eslint.org/docs', 'the link goes where it says');
  check((await description.textContent()).includes('<img src=x'), 'the markup shows as text');
  await rust('edited');

  await page.click('#task-actions [data-action="cancel"]');
  await page.click('#cancel-confirm [data-action="cancel-confirm"]');
  await title.filter({ hasText: 'cancelled' }).waitFor({ timeout: PATIENCE });
  await rust('cancelled');

  await page.selectOption('#action-to', 'tester');
  await page.fill('#action-message', 'Please look at the lint config first.');
  await page.click('#action-post button[type="submit"]');
  await page.locator('#action-status', { hasText: 'Sent' }).waitFor({ timeout: PATIENCE });
  await rust('posted');
  check((await page.title()) !== 'pwned', 'no script ran');
  note('reassigned, edited, cancelled and posted from the page');

  // The log says who did each of them.
  await page.evaluate(() => { location.hash = '#messages?type=task_action'; });
  await waitFor(() => document.querySelectorAll('#message-log tr.msg').length === 4, null, 'four task_action rows');
  check((await page.locator('#message-log tr.msg .route strong').allTextContents()).every((s) => s === 'coordinator'), 'every action by the coordinator');
  check((await page.inputValue('#filter-type')) === 'task_action', 'the filter came from the address');

  // Keyboard: 1 opens the board, a card's link opens its detail, Escape leaves it.
  await page.keyboard.press('1');
  await page.locator('#view-tasks').waitFor({ state: 'visible', timeout: PATIENCE });
  await page.keyboard.press('j');
  await page.keyboard.press('Enter');
  await page.locator('#view-task').waitFor({ state: 'visible', timeout: PATIENCE });
  await page.keyboard.press('Escape');
  await page.locator('#view-tasks').waitFor({ state: 'visible', timeout: PATIENCE });
  note('keyboard navigation');
});
