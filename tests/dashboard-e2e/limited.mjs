// The daemon refuses one of the page's two streams (the test allows one open stream per token):
// the top bar says so, as an alert, instead of showing a stale team under "live".

import { check, note, PATIENCE, withBrowser } from './harness.mjs';

await withBrowser(async (page, { shot, signIn }) => {
  await signIn();
  const bar = page.locator('#connection[data-state="limited"]');
  await bar.waitFor({ timeout: PATIENCE });
  check((await bar.textContent()).includes('too many open streams'), 'the bar names the limit');
  check((await bar.getAttribute('role')) === 'alert', 'announced as an alert');
  await shot('dashboard-stream-limit');
  note('the stream limit is shown');
});
