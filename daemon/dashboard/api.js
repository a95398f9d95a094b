// The API client: the session (team and token, kept in sessionStorage only) and requests with
// the token as a bearer header. The token never goes into a URL, the DOM or a log.

const KEY = 'huddle.session';
/** Pages of `GET …/progress` the Pass-rate view loads: 10,000 tasks. */
const MAX_PROGRESS_PAGES = 10;

/** `{team, token}` of this tab, or null. */
export function loadSession() {
  try {
    const session = JSON.parse(sessionStorage.getItem(KEY) || 'null');
    return session && typeof session.team === 'string' && typeof session.token === 'string' ? session : null;
  } catch {
    return null;
  }
}

export function saveSession(session) {
  sessionStorage.setItem(KEY, JSON.stringify({ team: session.team, token: session.token }));
}

export function clearSession() {
  sessionStorage.removeItem(KEY);
}

/** The daemon answered with its error shape (`{"error": {code, message}}`) or without one. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = code || 'http_error';
  }
}

/** The token is no longer accepted (revoked, rotated, or never valid). */
export class Unauthorized extends ApiError {
  constructor(message) {
    super(401, 'unauthorized', message);
  }
}

/** Request options shared by every call: bearer header, no cookies, no cache, no referrer. */
export function requestInit(token, extraHeaders, signal) {
  return {
    headers: { Authorization: `Bearer ${token}`, ...extraHeaders },
    credentials: 'omit',
    cache: 'no-store',
    referrerPolicy: 'no-referrer',
    signal,
  };
}

/** `/v1/teams/{team}{rest}` */
export function teamPath(team, rest) {
  return `/v1/teams/${encodeURIComponent(team)}${rest}`;
}

/** Turns a non-2xx answer into an `ApiError` (an `Unauthorized` for 401). */
export async function failure(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    // Not the API's error shape; the status says enough.
  }
  const message = body?.error?.message;
  if (res.status === 401) return new Unauthorized(message);
  return new ApiError(res.status, body?.error?.code, message);
}

/**
 * A client for one session. `onUnauthorized` runs once a call answers 401, before the call
 * rejects with `Unauthorized`.
 */
export function createApi(session, onUnauthorized) {
  let skewMs = 0;

  async function get(rest) {
    return send('GET', rest);
  }

  /** A request with an optional JSON body and extra headers; resolves to the answer's JSON. */
  async function send(method, rest, body, extraHeaders) {
    const headers = { Accept: 'application/json', ...extraHeaders };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const init = { ...requestInit(session.token, headers), method };
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await fetch(teamPath(session.team, rest), init);
    noteClock(res);
    if (!res.ok) {
      const err = await failure(res);
      if (err instanceof Unauthorized) onUnauthorized(err);
      throw err;
    }
    return res.json();
  }

  // The server's clock, from the `Date` header, so lease countdowns are right even when this
  // computer's clock is off. `Date` has whole seconds: only a skew beyond 2 s is believed.
  function noteClock(res) {
    const date = Date.parse(res.headers.get('Date') || '');
    if (Number.isNaN(date)) return;
    const skew = date - Date.now();
    skewMs = Math.abs(skew) > 2000 ? skew : 0;
  }

  return {
    session,
    get,
    /** Now, by the server's clock (ms since the epoch). */
    now: () => Date.now() + skewMs,
    agents: () => get('/agents').then((r) => r.agents),
    memory: () => get('/memory'),
    memoryHistory: () => get('/memory-history?limit=100').then((r) => r.changes),
    /** The newest event and message seq: where the streams are followed from after a snapshot. */
    cursors: () => get('/cursors'),
    /** Every task of the team, page after page. */
    allTasks: async () => {
      const tasks = [];
      let after = null;
      for (;;) {
        const page = await get(`/tasks?limit=1000${after ? `&after=${encodeURIComponent(after)}` : ''}`);
        tasks.push(...page.tasks);
        if (!page.next) return tasks;
        after = page.next;
      }
    },
    /** A page of the server-side message search: `{messages, total, next}`, newest first. */
    searchMessages: (params) => {
      const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '' && v != null));
      return get(`/messages/search?${query}`);
    },
    /** Each task's newest pass-rate report over the whole history, worst first, page after page
     * (at most `MAX_PROGRESS_PAGES` of 1,000 tasks). */
    allProgress: async () => {
      const messages = [];
      let offset = 0;
      for (let i = 0; i < MAX_PROGRESS_PAGES; i++) {
        const page = await get(`/progress?sort=rate&dir=asc&limit=1000&offset=${offset}`);
        messages.push(...page.messages);
        if (page.next == null) break;
        offset = page.next;
      }
      return messages;
    },
    /** The test history of the project posted to last: its runs, oldest first. */
    testHistory: () => get('/history'),
    /** The token's own `{name, role}`: which actions the page offers. */
    me: () => get('/me'),
    /** One task and its `task.*` events, newest first. */
    task: (id) => get(`/tasks/${encodeURIComponent(id)}`),
    taskEvents: (id) => get(`/tasks/${encodeURIComponent(id)}/events?limit=200`).then((r) => r.events),
    /** `PATCH` a task, refused with 412 if it changed since `version` (someone else acted). */
    patchTask: (id, patch, version) => send('PATCH', `/tasks/${encodeURIComponent(id)}`, patch,
      version != null ? { 'If-Match': `"${version}"` } : undefined),
    /** Holds pending task `id` until a person answers `question`: `{question, task}`. `kind`
     * `approval` asks for approve or reject; `personOnly` lets only a lead decide. */
    gate: (id, question, { kind, personOnly } = {}) => send('POST', `/tasks/${encodeURIComponent(id)}/gate`,
      { question, ...(kind ? { kind } : {}), ...(personOnly ? { personOnly: true } : {}) }),
    /** Answers a person's question (`HUMAN-NNN`), which releases the task it held. */
    /** Answers question `id`; `decision` (`approve`/`reject`) for an approval gate, where the
     * text is optional (a rejection's reason). */
    answer: (id, answer, decision) => send('POST', `/tasks/${encodeURIComponent(id)}/answer`,
      decision ? { decision, ...(answer ? { answer } : {}) } : { answer }),
    /** The team's webhooks (a coordinator's), without their secrets. */
    webhooks: () => get('/webhooks').then((r) => r.webhooks),
    /** The newest deliveries of the team's webhooks, newest first. */
    webhookDeliveries: (limit = 100) => get(`/webhooks/deliveries?limit=${limit}`).then((r) => r.deliveries),
    /** What the team (or one task, with `task`) spent on models: `{total, byTask, byAgent,
     * byModel, byDay}`. */
    spend: (task) => get(`/spend${task ? `?task=${encodeURIComponent(task)}` : ''}`),
    /** Posts a message as this token's agent: `{to, type, summary, data}`. */
    postMessage: (message) => send('POST', '/messages', message),
  };
}
