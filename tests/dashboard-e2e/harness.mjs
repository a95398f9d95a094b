// What the dashboard scripts share: the environment, the line protocol with the Rust side
// (`STEP <name>` out, `DONE <name> [text]` in), checks, and Debian's Chromium through
// playwright-core with a throwaway profile. Used by every script but dashboard.mjs.

import { chromium } from 'playwright-core';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

/** For conditions that take as long as they take (a reconnect, a page load). */
export const PATIENCE = 15_000;

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
/** Asks the Rust side to do `step`; resolves to the text it answers with. */
export async function rust(step) {
  console.log(`STEP ${step}`);
  const { value, done } = await lines.next();
  if (done) throw new Error(`stdin closed while waiting for ${step}`);
  const prefix = `DONE ${step}`;
  if (!value.startsWith(prefix)) throw new Error(`expected "${prefix}", got "${value}"`);
  return value.slice(prefix.length).trim();
}

export const note = (text) => console.log(`# ${text}`);

export function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

/** Starts Chromium; `run(page, tools)` drives it; PASS on success, a failure screenshot if not. */
export async function withBrowser(run, { width = 1440, height = 900 } = {}) {
  const shots = env('HUDDLE_SCREENSHOTS');
  mkdirSync(shots, { recursive: true });
  rmSync(join(shots, 'failure.png'), { force: true });
  const profile = mkdtempSync(join(tmpdir(), 'huddle-dashboard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: env('HUDDLE_CHROMIUM', '/usr/bin/chromium'),
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width, height },
    deviceScaleFactor: 1,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors = [];
  const watch = (p) => {
    p.on('pageerror', (err) => pageErrors.push(`uncaught: ${err.message}`));
    p.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) pageErrors.push(`CSP: ${msg.text()}`);
    });
  };
  watch(page);
  const waitFor = (fn, arg, what, timeout = PATIENCE) => page.waitForFunction(fn, arg, { timeout }).catch((e) => {
    throw new Error(`timed out waiting for ${what}: ${e.message.split('\n')[0]}`);
  });
  const shot = async (name) => {
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: false });
    note(`screenshot ${name}.png`);
  };
  // Signs `tab` (the first page unless given) in with `token` (HUDDLE_TOKEN unless given).
  const signIn = async (hash = '', { tab = page, token = env('HUDDLE_TOKEN') } = {}) => {
    await tab.goto(`${env('HUDDLE_URL')}/${hash}`);
    await tab.locator('#signin').waitFor({ state: 'visible', timeout: PATIENCE });
    await tab.fill('#signin-team', env('HUDDLE_TEAM'));
    await tab.fill('#signin-token', token);
    await tab.click('#signin-submit');
    await tab.locator('#app').waitFor({ state: 'visible', timeout: PATIENCE });
  };
  // Another tab: a second person (the session lives in each tab's sessionStorage).
  const newTab = async () => {
    const tab = await context.newPage();
    watch(tab);
    return tab;
  };
  try {
    await run(page, { waitFor, shot, signIn, newTab, pageErrors });
    check(pageErrors.length === 0, `no script error and no CSP refusal: ${pageErrors.join('; ')}`);
    console.log('PASS');
  } catch (err) {
    console.error(`dashboard e2e failed: ${err.stack || err}`);
    if (pageErrors.length) console.error(`the page said: ${pageErrors.join('; ')}`);
    await page.screenshot({ path: join(shots, 'failure.png') }).catch(() => {});
    process.exitCode = 1;
  } finally {
    await context.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
    process.stdin.destroy();
  }
}
