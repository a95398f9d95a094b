// Server-Sent Events over fetch(): EventSource cannot send an Authorization header, and the
// token must never go into a URL. Reconnects with `Last-Event-ID` after a drop, with backoff.

import { failure, requestInit, Unauthorized } from './api.js';

/** The daemon sends a keep-alive comment every 15 s; three missed means the link is dead. */
const IDLE_MS = 45_000;
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 15_000;

/**
 * Parses an SSE stream decoded to text. Feed it chunks; it calls `onEvent({id, event, data})`
 * per complete event. `lastId` is what a reconnect resumes after: as the spec has it, the last
 * `id` of a *finished* block (one ended by a blank line, with or without data), so an event cut
 * off mid-way is asked for again.
 */
export class SseParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buffer = '';
    this.lastId = null;
    this.idBuffer = null;
    this.reset();
  }

  reset() {
    this.data = [];
    this.event = '';
  }

  push(text) {
    this.buffer += text;
    // A line ends at CRLF, LF or CR; a CR at the very end may be half of a CRLF.
    const lines = this.buffer.split(/\r\n|\n|\r(?!$)/);
    this.buffer = lines.pop();
    for (const line of lines) this.line(line);
  }

  line(line) {
    if (line === '') {
      this.lastId = this.idBuffer;
      if (this.data.length > 0) {
        this.onEvent({ id: this.lastId, event: this.event || 'message', data: this.data.join('\n') });
      }
      this.reset();
      return;
    }
    if (line.startsWith(':')) return; // a comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.idBuffer = value;
  }
}

/**
 * Follows `path` until `stop()`: `onEvent(event)` per event (data parsed as JSON),
 * `onStatus('connecting' | 'live' | 'retrying' | 'limited', message?)` ('limited': the daemon
 * refused the stream, too many open — 429, or 409 `team_limit`), `onUnauthorized(err)` once, after which the
 * stream stops for good. Starts after `after` (a seq; from the beginning without it) and
 * resumes after the last id seen.
 */
export function follow({ path, token, after, onEvent, onStatus, onUnauthorized }) {
  let stopped = false;
  let lastId = after != null ? String(after) : null;
  let current = null; // the AbortController of the connection in progress
  let retryTimer = null;
  let wake = null;

  function status(s) {
    if (!stopped) onStatus?.(s);
  }

  async function connectOnce() {
    const controller = new AbortController();
    current = controller;
    let idle = setTimeout(() => controller.abort(), IDLE_MS);
    const alive = () => {
      clearTimeout(idle);
      idle = setTimeout(() => controller.abort(), IDLE_MS);
    };
    try {
      const headers = { Accept: 'text/event-stream' };
      if (lastId !== null) headers['Last-Event-ID'] = lastId;
      const res = await fetch(path, requestInit(token, headers, controller.signal));
      if (!res.ok) throw await failure(res);
      status('live');
      const parser = new SseParser((ev) => {
        let data;
        try {
          data = JSON.parse(ev.data);
        } catch {
          return; // not JSON: not ours to show
        }
        onEvent({ id: ev.id, event: ev.event, data });
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return true; // the server ended the stream: shutdown or a revoked token
        alive();
        parser.push(value);
        if (parser.lastId !== null) lastId = parser.lastId;
      }
    } finally {
      clearTimeout(idle);
      current = null;
    }
  }

  async function run() {
    let delay = FIRST_RETRY_MS;
    while (!stopped) {
      status('connecting');
      let receivedAny = false;
      let limited = null;
      try {
        receivedAny = await connectOnce();
      } catch (err) {
        if (stopped) return;
        if (err instanceof Unauthorized) {
          stopped = true;
          onUnauthorized?.(err);
          return;
        }
        limited = err.status === 429 || (err.status === 409 && err.code === 'team_limit') ? err : null;
      }
      if (stopped) return;
      // Too many open streams (this token's, the team's or this address's): say so, keep trying
      // slowly in case another tab closes.
      if (limited) onStatus?.('limited', limited.message);
      else status('retrying');
      // A stream that was up starts the backoff over; one that could not connect doubles it.
      delay = receivedAny ? FIRST_RETRY_MS : limited ? MAX_RETRY_MS : Math.min(delay * 2, MAX_RETRY_MS);
      const jittered = delay / 2 + Math.random() * (delay / 2);
      await new Promise((resolve) => {
        wake = resolve;
        retryTimer = setTimeout(resolve, jittered);
      });
    }
  }

  run();
  return {
    stop() {
      stopped = true;
      clearTimeout(retryTimer);
      wake?.();
      current?.abort();
    },
  };
}
