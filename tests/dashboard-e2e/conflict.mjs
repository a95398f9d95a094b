// Two people edit one task at once (tests/tests/dashboard/conflict.rs checks the task through
// the API after each step). Alex (HUDDLE_TOKEN, a lead) changes the description and saves;
// Dana (HUDDLE_LEAD_TOKEN, a lead), who began editing the subject before that, saves next: the
// page sends only the subject, with If-Match of the version Dana started from, gets 412, and
// shows what changed; Dana saves hers over it and Alex's description survives. Then both change
// the description; Dana's Save shows the conflict again, she discards hers, and nothing of hers
// is sent. Every PATCH Dana's tab sends is recorded and checked.

import { check, env, note, PATIENCE, rust, withBrowser } from './harness.mjs';

const ID = 'TEST-001';

await withBrowser(async (alex, { signIn, newTab, shot }) => {
  const dana = await newTab();
  const patches = []; // what Dana's tab sent: {body, ifMatch}
  dana.on('request', (r) => {
    if (r.method() === 'PATCH') patches.push({ body: r.postDataJSON(), ifMatch: r.headers()['if-match'] });
  });
  const version = async (tab) => Number((await tab.locator('#view-task .detail-facts dt', { hasText: 'version' })
    .locator('xpath=following-sibling::dd[1]').textContent()).trim());
  const open = async (tab, token) => {
    await signIn(`#/tasks/${ID}`, { tab, token });
    await tab.locator('#view-task .detail-title', { hasText: ID }).waitFor({ timeout: PATIENCE });
    await tab.locator('#action-edit').waitFor({ state: 'visible', timeout: PATIENCE });
  };
  await open(alex, env('HUDDLE_TOKEN'));
  await open(dana, env('HUDDLE_LEAD_TOKEN'));
  const started = await version(dana);
  check(await dana.inputValue('#action-description') === 'Run the auth suite.', 'the form starts from the task');

  // Dana begins: a new subject. Then Alex saves a new description.
  await dana.fill('#action-subject', 'Unit tests for auth and sessions');
  await alex.fill('#action-description', 'Run the auth suite against staging.');
  await alex.click('#action-edit button[type="submit"]');
  await alex.locator('#action-status', { hasText: `${ID} edited` }).waitFor({ timeout: PATIENCE });
  await rust(`alex-saved ${started}`);

  // Dana's page shows Alex's version live; her form keeps what she typed and where she began.
  await dana.locator('#view-task .detail-head .markdown', { hasText: 'against staging' }).waitFor({ timeout: PATIENCE });
  check(await version(dana) === started + 1, 'Dana sees the new version');
  check(await dana.inputValue('#action-subject') === 'Unit tests for auth and sessions', 'her subject stays in the form');

  await dana.click('#action-edit button[type="submit"]');
  const conflict = dana.locator('#action-conflict');
  await conflict.waitFor({ state: 'visible', timeout: PATIENCE });
  check(patches.length === 1, `one PATCH sent (${patches.length})`);
  check(JSON.stringify(patches[0].body) === JSON.stringify({ subject: 'Unit tests for auth and sessions' }), `only the subject was sent: ${JSON.stringify(patches[0].body)}`);
  check(patches[0].ifMatch === `"${started}"`, `If-Match of the version Dana started from: ${patches[0].ifMatch}`);
  check((await dana.locator('#action-status').textContent()).includes('Not saved'), 'the page says nothing was saved');
  check(!(await dana.locator('#action-status').textContent()).includes('edited'), 'it does not say edited');
  const row = (field) => conflict.locator(`tr[data-field="${field}"]`);
  check(await row('description').getAttribute('class') === 'conflict-theirs', 'the description changed meanwhile');
  check((await row('description').locator('[data-side="now"]').textContent()).includes('against staging'), 'Alex\'s description is shown as now');
  check((await row('description').locator('[data-side="started"]').textContent()).includes('Run the auth suite.'), 'the description Dana started from');
  check(await row('subject').getAttribute('class') === 'conflict-mine', 'the subject is Dana\'s change');
  check((await row('subject').locator('[data-side="mine"]').textContent()).includes('and sessions'), 'her subject is shown');
  await shot('conflict-shown');
  await rust('conflict-shown');

  // Dana keeps hers: only the subject again, over the version she was shown.
  await conflict.locator('[data-choice="mine"]').click();
  await dana.locator('#action-status', { hasText: `${ID} edited` }).waitFor({ timeout: PATIENCE });
  check(await conflict.isHidden(), 'the conflict is gone once saved');
  check(patches.length === 2, `a second PATCH (${patches.length})`);
  check(JSON.stringify(patches[1].body) === JSON.stringify({ subject: 'Unit tests for auth and sessions' }), `only the subject again: ${JSON.stringify(patches[1].body)}`);
  check(patches[1].ifMatch === `"${started + 1}"`, `If-Match of the version shown in the conflict: ${patches[1].ifMatch}`);
  check(await dana.inputValue('#action-description') === 'Run the auth suite against staging.', 'Dana\'s form now holds Alex\'s description');
  await rust('dana-saved');
  note('a conflict shown and resolved by saving over it; nothing lost');

  // Both change the description; Alex first. Alex's form followed Dana's save.
  await alex.waitForFunction((v) => document.querySelector('#action-subject').value === v,
    'Unit tests for auth and sessions', { timeout: PATIENCE });
  await dana.fill('#action-description', 'Dana: run it twice.');
  await alex.fill('#action-description', 'Alex: run it on staging and prod.');
  await alex.click('#action-edit button[type="submit"]');
  await alex.locator('#view-task .detail-head .markdown', { hasText: 'staging and prod' }).waitFor({ timeout: PATIENCE });
  await rust('alex-saved-again');
  await dana.click('#action-edit button[type="submit"]');
  await conflict.waitFor({ state: 'visible', timeout: PATIENCE });
  check(await row('description').getAttribute('class') === 'conflict-both', 'both changed the description');
  check((await row('description').locator('[data-side="mine"]').textContent()).includes('run it twice'), 'hers is shown');
  check(JSON.stringify(patches[2].body) === JSON.stringify({ description: 'Dana: run it twice.' }), `only the description was sent: ${JSON.stringify(patches[2].body)}`);
  await conflict.locator('[data-choice="theirs"]').click();
  await conflict.waitFor({ state: 'hidden', timeout: PATIENCE });
  check(await dana.inputValue('#action-description') === 'Alex: run it on staging and prod.', 'the form shows Alex\'s description');
  check(patches.length === 3, `discarding sends nothing (${patches.length} PATCHes)`);
  check((await dana.locator('#action-status').textContent()).includes('Discarded'), 'the page says hers was discarded');
  await rust('dana-discarded');
  note('a conflict resolved by discarding: nothing sent');
});
