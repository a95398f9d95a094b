// The sign-in view: team and token, checked against the daemon before they are kept.

import { ApiError, createApi, saveSession, Unauthorized } from './api.js';

const $ = (id) => document.getElementById(id);

/** Shows the form with `message` (why we are here), then calls `onSignedIn(session)`. */
export function showSignIn(message, onSignedIn) {
  $('app').hidden = true;
  $('signin').hidden = false;
  $('signin-message').textContent = message || '';
  $('signin-token').value = '';
  const form = $('signin-form');
  form.onsubmit = async (e) => {
    e.preventDefault();
    const team = $('signin-team').value.trim();
    const token = $('signin-token').value.trim();
    $('signin-submit').disabled = true;
    $('signin-message').textContent = '';
    try {
      const session = { team, token };
      await check(session);
      // The token leaves the DOM as soon as it is checked.
      $('signin-token').value = '';
      saveSession(session);
      $('signin').hidden = true;
      onSignedIn(session);
    } catch (err) {
      $('signin-message').textContent = explain(err);
    } finally {
      $('signin-submit').disabled = false;
    }
  };
  ($('signin-team').value ? $('signin-token') : $('signin-team')).focus();
}

/** A token that may read the team: listing agents needs only an observer's. */
async function check(session) {
  await createApi(session, () => {}).agents();
}

function explain(err) {
  if (err instanceof Unauthorized) return 'That token is not accepted (unknown, revoked or rotated).';
  if (err instanceof ApiError) {
    if (err.status === 404) return 'No such team for this token.';
    if (err.status === 403) return 'The admin token manages teams only: sign in with an agent token.';
    if (err.status === 429) return 'Too many requests; wait a moment and try again.';
    return `The daemon refused: ${err.message}`;
  }
  return 'The daemon cannot be reached.';
}
