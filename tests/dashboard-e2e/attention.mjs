// What needs a person, first (tests/tests/dashboard/attention.rs makes the API calls and checks
// their effects). HUDDLE_TOKEN is a coordinator's. On load the panel already lists TEST-007's
// regression and TEST-001's error, from the server's history; then a question, a fix_required, a failed task
// and a test_result under the gate arrive, and after each the panel lists exactly what waits, in
// order, each linked to its task. The fix_required is answered and the failed task retried in
// the panel. The board is above the dependency graph (desktop and phone), an in-progress card
// shows its iteration and pass rate, ready tasks lead Pending, a completed card under the gate is
// not green, a log row links to its task, and Cancel asks before it cancels.

import { check, note, PATIENCE, rust, withBrowser } from './harness.mjs';

await withBrowser(async (page, { waitFor, shot, signIn }) => {
  await signIn('#tasks');
  const need = (kind, task) => page.locator(`#attention-needs li[data-kind="${kind}"][data-task="${task}"]`);
  const listed = () => page.locator('#attention-needs li').evaluateAll((els) => els.map((e) => `${e.dataset.kind}:${e.dataset.task}`));
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  await need('error', 'TEST-001').waitFor({ timeout: PATIENCE });
  await need('regression', 'TEST-007').waitFor({ timeout: PATIENCE });
  check(same(await listed(), ['regression:TEST-007', 'error:TEST-001']), `the regression and the error on load: ${await listed()}`);
  check((await need('regression', 'TEST-007').textContent()).includes('99.0 % → 96.0 %'), 'the regression says from what to what');
  check(await page.locator('#attention-title').isHidden(), 'no question yet');

  // The board: TEST-001's fix cycle on its card; the ready task first in Pending.
  const first = page.locator('#board .card[data-task="TEST-001"] .cycle');
  await first.waitFor({ timeout: PATIENCE });
  const cycle = await first.textContent();
  check(cycle.includes('iteration 3/5') && cycle.includes('72.0 %'), `the in-progress card's cycle: ${cycle}`);
  const pending = await page.locator('.column-pending .card').evaluateAll((els) => els.map((e) => e.dataset.task));
  check(same(pending, ['TEST-003', 'TEST-002', 'TEST-006']), `ready first in Pending: ${pending}`);

  // The board above the graph, on a desktop and on a phone.
  for (const [width, height] of [[1440, 900], [390, 844]]) {
    await page.setViewportSize({ width, height });
    const at = await page.evaluate(() => ({
      board: document.querySelector('#board').getBoundingClientRect().top,
      graph: document.querySelector('.graph-panel').getBoundingClientRect().top,
    }));
    check(at.board < at.graph, `the board (${at.board} px) above the graph (${at.graph} px) at ${width} px`);
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  note('the board is above the graph; the in-progress card shows its cycle; ready tasks lead');

  // A question, a fix_required, a failed task, a missed gate: each listed as it happens.
  const qid = await rust('question');
  const question = page.locator(`#attention li[data-question="${qid}"]`);
  await question.waitFor({ timeout: PATIENCE });
  check((await question.locator('.attention-question strong').textContent()) === 'tonight', 'the question as markdown');
  await page.locator(`#board .card[data-task="${qid}"] .question-text strong`, { hasText: 'tonight' }).waitFor({ timeout: PATIENCE });
  await rust('fix-required');
  await need('fix', 'TEST-001').waitFor({ timeout: PATIENCE });
  await rust('fail');
  await need('failed', 'TEST-004').waitFor({ timeout: PATIENCE });
  await rust('gate-missed');
  await need('gate', 'TEST-005').waitFor({ timeout: PATIENCE });
  // The test result (message stream) may come before TEST-005's completion (event stream):
  // the card is marked, and the list settles, once both are in.
  const fifth = page.locator('#board .card[data-task="TEST-005"]');
  await page.locator('#board .card.card-below-gate[data-task="TEST-005"]').waitFor({ timeout: PATIENCE });
  const order = ['fix:TEST-001', 'failed:TEST-004', 'gate:TEST-005', 'regression:TEST-007', 'error:TEST-001'];
  await waitFor((want) => JSON.stringify([...document.querySelectorAll('#attention-needs li')]
    .map((e) => `${e.dataset.kind}:${e.dataset.task}`)) === JSON.stringify(want)
    && document.getElementById('attention-needs-count')?.textContent === String(want.length), order,
  `what needs a look, in order: ${order}`).catch(async (e) => {
    throw new Error(`${e.message} (listed: ${await listed()})`);
  });
  check((await page.locator('#attention-count').textContent()) === '1', 'one question');
  check((await need('gate', 'TEST-005').locator('a.task-id').getAttribute('href')) === '#/tasks/TEST-005', 'linked to its task');
  check((await need('gate', 'TEST-005').textContent()).includes('72.0 %'), 'the missed gate says the rate');
  check((await fifth.locator('.rate-good').count()) === 0, 'and nothing on it is green');
  await shot('attention');

  // Acting in place: an answer to the fix_required, a retry of the failed task.
  await need('fix', 'TEST-001').locator('textarea').fill('Run make fixtures first.');
  await need('fix', 'TEST-001').locator('button[type="submit"]').click();
  await need('fix', 'TEST-001').waitFor({ state: 'detached', timeout: PATIENCE });
  await rust('answered-fix');
  await need('failed', 'TEST-004').locator('[data-act="retry"]').click();
  await need('failed', 'TEST-004').waitFor({ state: 'detached', timeout: PATIENCE });
  await rust('retried');
  check(same(await listed(), ['gate:TEST-005', 'regression:TEST-007', 'error:TEST-001']), `answered and retried leave: ${await listed()}`);
  note('the panel lists what needs a person and acts in place');

  // The log: a row about a task links to it, and says how long ago it came.
  await page.click('.tabs a[data-view="messages"]');
  const fixRow = page.locator('#message-log tr.msg[data-type="fix_required"]');
  await fixRow.waitFor({ timeout: PATIENCE });
  check((await fixRow.locator('a.task-link').getAttribute('href')) === '#/tasks/TEST-001', 'the log row links to its task');
  const when = await fixRow.locator('.time').textContent();
  check(/ago$|^just now$/.test(when), `the time is a duration: ${when}`);

  // Cancel asks first; "Keep it" keeps it.
  await page.evaluate(() => { location.hash = '#/tasks/TEST-006'; });
  const cancel = page.locator('#task-actions [data-action="cancel"]');
  await cancel.waitFor({ state: 'visible', timeout: PATIENCE });
  const confirm = page.locator('#cancel-confirm');
  check(await confirm.isHidden(), 'no confirmation before Cancel');
  await cancel.click();
  await confirm.waitFor({ state: 'visible', timeout: PATIENCE });
  check((await confirm.textContent()).includes('Cancel TEST-006?'), `it names the task: ${await confirm.textContent()}`);
  await rust('cancel-asked');
  await confirm.locator('[data-action="cancel-keep"]').click();
  await confirm.waitFor({ state: 'hidden', timeout: PATIENCE });
  await cancel.click();
  await confirm.locator('[data-action="cancel-confirm"]').click();
  await page.locator('#view-task .detail-title', { hasText: 'cancelled' }).waitFor({ timeout: PATIENCE });
  await rust('cancel-confirmed');
  note('Cancel asked first');
});
