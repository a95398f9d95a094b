// People in the loop (tests/tests/dashboard/gates.rs drives it): a coordinator's page shows a
// question the API asked in the attention panel and the tab title's count; it is answered from
// the keyboard in the panel; the task's page opens with its verdict (report, failures, diff,
// gate); "Ask a person" from a task's detail, answered in the question's
// own detail; the Webhooks view lists the deliveries made to a real receiver; an approval gate
// is rejected with a reason from the panel; a person-only gate shows the coordinator a note,
// not the buttons; an observer sees the panel without answer controls; a lead approves the
// person-only gate. Screenshots of the panel light/dark, desktop/390 px.
// Env as dashboard.mjs (HUDDLE_TOKEN a coordinator's), HUDDLE_OBSERVER_TOKEN, HUDDLE_LEAD_TOKEN.

import { check, env, note, PATIENCE, rust, withBrowser } from './harness.mjs';

await withBrowser(async (page, { waitFor, shot, signIn }) => {
  await signIn('#tasks');
  await page.locator('#board .card', { hasText: 'TEST-001' }).waitFor({ timeout: PATIENCE });
  check(await page.locator('#attention').isHidden(), 'nothing waits on a person yet');
  check((await page.title()) === 'huddle', `no count in the title yet: ${await page.title()}`);

  // The API asks; the panel and the count appear live, without a reload.
  const qid = await rust('gate');
  const item = page.locator(`#attention li[data-question="${qid}"]`);
  await item.waitFor({ timeout: PATIENCE });
  await waitFor(() => document.title === '(1) huddle', null, 'the count in the tab title');
  check((await item.locator('a.held').textContent()) === 'TEST-001', 'the question names the task it holds');
  check((await item.textContent()).includes('Drop the legacy table'), 'with that task\'s subject');
  check((await item.locator('.attention-question strong').textContent()) === '2 GB', 'the question as markdown');
  check((await page.locator('#attention-count').textContent()) === '1', 'the panel counts one');
  note(`${qid} shows in the panel and the title`);
  // On the board the question is no claimable work: it awaits an answer, it is not "ready".
  const questionCard = page.locator(`#board .card[data-task="${qid}"]`);
  await questionCard.waitFor({ timeout: PATIENCE });
  const questionBadge = await questionCard.locator('.badge').textContent();
  check(questionBadge === 'awaiting answer', `the question's card says it awaits an answer: ${questionBadge}`);

  // Light and dark, desktop and 390 px, without sideways scrolling.
  for (const scheme of ['light', 'dark']) {
    for (const [size, width, height] of [['desktop', 1440, 900], ['mobile', 390, 844]]) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height });
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      const overflow = await page.evaluate(() => ({ scroll: document.scrollingElement.scrollWidth, inner: window.innerWidth }));
      check(overflow.scroll <= overflow.inner, `the panel at ${width} px (${scheme}) scrolls sideways: ${overflow.scroll} > ${overflow.inner}`);
      await shot(`gates-attention-${scheme}-${size}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1440, height: 900 });

  // Answered from the keyboard: `a` reaches the answer box, Tab the button.
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('a');
  await waitFor((id) => document.activeElement?.closest?.(`#attention li[data-question="${id}"] textarea`) != null, qid, '`a` focuses the answer box');
  await page.keyboard.type('Yes, after the backup.');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await item.waitFor({ state: 'detached', timeout: PATIENCE });
  await waitFor(() => document.title === 'huddle', null, 'the count leaves the title');
  check(await page.locator('#attention').isHidden(), 'nothing waits any more');
  await rust(`answered ${qid}`);
  note('answered in the panel; the API shows the question completed and TEST-001 claimable');

  // The task's page opens with its verdict: the last report against the gate, what fails and
  // why, the diff, and the gate with who answered what.
  await rust('report');
  await page.evaluate(() => { location.hash = '#/tasks/TEST-001'; });
  const verdict = page.locator('#task-verdict');
  await verdict.locator('.verdict-line').waitFor({ timeout: PATIENCE });
  const line = await verdict.locator('.verdict-line').textContent();
  check(line.includes('80.0 %') && line.includes('below the gate (95 %)') && line.includes('4 passed, 1 failed'), `the verdict line: ${line}`);
  check((await verdict.locator('.verdict-failures li').textContent()).includes('tests/test_calc.py::test_average: assert 2.5 == 3'), 'the failing test and why');
  const diff = await verdict.locator('pre.diff').textContent();
  check(diff.includes('+    return total_sum / count_of_items'), `the diff keeps every character: ${diff}`);
  // And shows it: a line's background leaves room below the line above, where an underscore
  // (drawn past the font's descent in some monospace fonts) would otherwise be painted over.
  // Measured in the same step that sees the lines laid out: a re-render between two steps
  // leaves the measured spans detached, 0×0.
  const tight = await (await waitFor(() => {
    const spans = [...document.querySelectorAll('#task-verdict pre.diff span')];
    if (spans.length < 2 || !spans.every((s) => s.isConnected && s.getBoundingClientRect().height > 0)) return null;
    return spans.slice(1)
      .map((s, i) => [spans[i].getBoundingClientRect().bottom, s.getBoundingClientRect().top])
      .filter(([bottom, top]) => top - bottom < 2);
  }, null, 'the diff is laid out')).jsonValue();
  check(tight.length === 0, `diff lines touch, hiding underscores: ${JSON.stringify(tight)}`);
  const gateRow = verdict.locator(`li[data-gate="${qid}"]`);
  const gateText = await gateRow.textContent();
  check(gateText.includes('answered by coordinator') && gateText.includes('Yes, after the backup.'), `the gate says who answered what: ${gateText}`);
  const order = await page.evaluate(() => {
    const at = (sel) => document.querySelector(sel)?.getBoundingClientRect().top ?? -1;
    return { verdict: at('#task-verdict'), facts: at('.detail-facts') };
  });
  check(order.verdict >= 0 && order.verdict < order.facts, `the verdict comes before the fields: ${JSON.stringify(order)}`);
  await shot('gates-verdict');
  note('TEST-001 opens with its verdict and the gate that held it');

  // Ask a person from a pending task's detail; answer in the question's own detail.
  await page.evaluate(() => { location.hash = '#/tasks/TEST-002'; });
  await page.locator('#gate-ask').waitFor({ timeout: PATIENCE });
  await page.fill('#gate-question', 'Which keys may be rotated today?');
  await page.click('#gate-ask button[type="submit"]');
  const asked = page.locator('#gate-status', { hasText: 'Asked as' });
  await asked.waitFor({ timeout: PATIENCE });
  const second = (await asked.textContent()).match(/HUMAN-\d+/)[0];
  await page.locator(`#attention li[data-question="${second}"]`).waitFor({ timeout: PATIENCE });
  await waitFor(() => document.title === '(1) TEST-002 · huddle', null, 'the count before the detail\'s title');
  await page.locator('#view-task .detail-deps a.chip', { hasText: second }).waitFor({ timeout: PATIENCE });
  await rust(`asked ${second}`);

  await page.click(`#view-task .detail-deps a.chip:has-text("${second}")`);
  await page.locator('#gate-answer').waitFor({ timeout: PATIENCE });
  check(await page.locator('#task-actions').isHidden(), 'a question is answered, not edited');
  check((await page.locator('#gate-actions a.task-id').textContent()) === 'TEST-002', 'the detail names the task it holds');
  await page.fill('#gate-answer-text', 'Rotate them tonight.');
  await page.click('#gate-answer button[type="submit"]');
  await page.locator('#view-task .detail-title', { hasText: 'completed' }).waitFor({ timeout: PATIENCE });
  check(await page.locator('#gate-actions').isHidden(), 'an answered question offers no form');
  await rust(`released ${second}`);
  note('asked from TEST-002\'s detail and answered in the question\'s');

  // The deliveries the receiver got, in the coordinator's Webhooks view.
  const ids = (await rust('delivered')).split(',');
  await page.click('.tabs a[data-view="webhooks"]');
  await page.locator('#webhook-list tr[data-webhook]').waitFor({ timeout: PATIENCE });
  for (const id of ids) {
    await page.locator(`#webhook-deliveries tr[data-delivery="${id}"].delivery-delivered`).waitFor({ timeout: PATIENCE });
  }
  const rows = await page.locator('#webhook-deliveries tr.delivery').evaluateAll((trs) => trs.map((tr) => ({
    text: tr.textContent, attempts: tr.querySelector('.delivery-attempts').textContent,
  })));
  check(rows.length === 2 && rows.every((r) => r.text.includes('needs_human') && r.text.includes('HUMAN-')), `two needs_human deliveries: ${JSON.stringify(rows)}`);
  check(JSON.stringify(rows.map((r) => r.attempts).sort()) === '["1","2"]', `one of them after a second attempt: ${JSON.stringify(rows)}`);
  await shot('gates-webhooks');
  note('the Webhooks view lists the deliveries');

  // An approval gate: Approve and Reject in the panel; rejecting with a reason cancels the task.
  const approval = await rust('gate-approval');
  const decide = page.locator(`#attention li[data-question="${approval}"]`);
  await decide.waitFor({ timeout: PATIENCE });
  check((await decide.locator('button').allTextContents()).join(',') === 'Approve,Reject', 'an approval gate offers Approve and Reject');
  await decide.locator('textarea').fill('Billing freezes this week; leave calc.py alone.');
  await decide.locator('button.reject').click();
  await decide.waitFor({ state: 'detached', timeout: PATIENCE });
  await rust(`rejected ${approval}`);
  await page.click('.tabs a[data-view="tasks"]');
  await page.locator('#board .card[data-task="TEST-004"] .badge-rejected').waitFor({ timeout: PATIENCE });
  note('rejected in the panel; the API shows the task cancelled with the reason, the board marks it');

  // A person-only gate: the coordinator sees who decides it, and no buttons.
  const personal = await rust('gate-person-only');
  const held = page.locator(`#attention li[data-question="${personal}"]`);
  await held.waitFor({ timeout: PATIENCE });
  await held.locator('.person-only').waitFor({ timeout: PATIENCE });
  check((await held.locator('textarea, button').count()) === 0, 'no decision controls for a coordinator on a person-only gate');
  check((await held.locator('.person-only').textContent()).includes("a lead's token"), 'the row says who decides');
  await page.locator('#board .card[data-task="TEST-005"] .badge-person').waitFor({ timeout: PATIENCE });
  note('a person-only gate shows the coordinator a note, not the buttons');

  // An observer: sees what waits, may not answer, gets no Webhooks tab and no gate forms.
  const third = await rust('gate-for-observer');
  await page.locator(`#attention li[data-question="${third}"]`).waitFor({ timeout: PATIENCE });
  await page.click('#signout');
  await page.locator('#signin').waitFor({ state: 'visible', timeout: PATIENCE });
  await page.fill('#signin-team', env('HUDDLE_TEAM'));
  await page.fill('#signin-token', env('HUDDLE_OBSERVER_TOKEN'));
  await page.click('#signin-submit');
  await page.evaluate(() => { location.hash = '#tasks'; });
  const seen = page.locator(`#attention li[data-question="${third}"]`);
  await seen.waitFor({ timeout: PATIENCE });
  await waitFor(() => document.getElementById('attention-hint')?.textContent.includes('A coordinator or a lead answers'), null, 'the observer\'s hint');
  // Waited for, not read once: a row drawn before the tasks arrived (a test result with no
  // task status yet reads as a missed gate, with a Dismiss button) leaves a frame later, and
  // the coordinator's Webhooks tab is hidden only once the observer's `/me` answers.
  await waitFor(() => document.querySelectorAll('#attention textarea, #attention button').length === 0, null, 'no answer controls for an observer');
  await page.locator('#tab-webhooks').waitFor({ state: 'hidden', timeout: PATIENCE });
  await page.evaluate((id) => { location.hash = `#/tasks/${id}`; }, third);
  await page.locator('#view-task .detail-title', { hasText: third }).waitFor({ timeout: PATIENCE });
  check(await page.locator('#gate-actions').isHidden(), 'no answer form in the detail');
  await page.evaluate(() => { location.hash = '#/tasks/TEST-003'; });
  await page.locator('#view-task .detail-title', { hasText: 'TEST-003' }).filter({ hasText: 'pending' }).waitFor({ timeout: PATIENCE });
  check(await page.locator('#gate-actions').isHidden(), 'no "Ask a person" for an observer, even on a pending task');
  await shot('gates-observer');
  note('an observer sees the panel without answer controls');

  // A lead: Approve and Reject on the person-only gate; approving releases its task.
  await page.click('#signout');
  await page.locator('#signin').waitFor({ state: 'visible', timeout: PATIENCE });
  await page.fill('#signin-team', env('HUDDLE_TEAM'));
  await page.fill('#signin-token', env('HUDDLE_LEAD_TOKEN'));
  await page.click('#signin-submit');
  await page.evaluate(() => { location.hash = '#tasks'; });
  const mine = page.locator(`#attention li[data-question="${personal}"]`);
  await mine.locator('button.approve').waitFor({ timeout: PATIENCE });
  check((await mine.locator('button').allTextContents()).join(',') === 'Approve,Reject', 'a lead decides a person-only gate');
  await mine.locator('textarea').fill('Yes, I checked the freeze calendar.');
  await mine.locator('button.approve').click();
  await mine.waitFor({ state: 'detached', timeout: PATIENCE });
  await rust(`person-approved ${personal}`);
  note('a lead approved the person-only gate in the panel');
});
