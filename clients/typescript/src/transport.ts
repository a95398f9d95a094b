/** Sending one request: headers, the error shape, and retries of requests safe to repeat. */
import { errorOf, HuddleError, transportError } from "./errors.js";

export interface Request {
  method: "GET" | "POST" | "PUT" | "PATCH";
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  /** Safe to send again after a drop (a read, or a write made idempotent by its key). */
  retry?: boolean;
  /** Extra time the daemon may take before answering (a long poll's wait). */
  waitMs?: number;
}

export interface Connection {
  url: string;
  token: string;
  fetch: typeof fetch;
  timeoutMs: number;
  retries: number;
}

export function url(base: string, path: string, query?: Request["query"]): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined) params.set(k, String(v));
  }
  const qs = params.toString();
  return `${base}${path}${qs ? `?${qs}` : ""}`;
}

export function headers(token: string, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${token}`, accept: "application/json", ...extra };
}

/** Waits `ms`, or less when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Milliseconds before the next try: `Retry-After` when given, else exponential with jitter. */
export function backoff(attempt: number, error?: HuddleError): number {
  if (error?.retryAfter !== undefined) return Math.min(error.retryAfter, 30) * 1000;
  return Math.min(5000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2);
}

export async function send<T>(conn: Connection, req: Request): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await once<T>(conn, req);
    } catch (e) {
      const error = e as HuddleError;
      const again = error.isTransport ? req.retry === true : error.status === 429 || error.status === 503;
      if (!again || attempt >= conn.retries) throw error;
      await sleep(backoff(attempt, error));
    }
  }
}

async function once<T>(conn: Connection, req: Request): Promise<T> {
  const h = headers(conn.token, req.headers);
  let body: string | undefined;
  if (req.method !== "GET") {
    h["content-type"] = req.contentType ?? "application/json";
    body = JSON.stringify(req.body ?? {});
  }
  const timeout = AbortSignal.timeout(conn.timeoutMs + (req.waitMs ?? 0));
  let response: Response;
  try {
    response = await conn.fetch(url(conn.url, req.path, req.query), { method: req.method, headers: h, body, signal: timeout });
  } catch (e) {
    throw transportError(`${req.method} ${req.path}`, e);
  }
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}
