/** Sending one request: headers, the error shape, and retries of requests safe to repeat. */
import { errorOf, transportError } from "./errors.js";
export function url(base, path, query) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) {
        if (v !== undefined)
            params.set(k, String(v));
    }
    const qs = params.toString();
    return `${base}${path}${qs ? `?${qs}` : ""}`;
}
export function headers(token, extra = {}) {
    return { authorization: `Bearer ${token}`, accept: "application/json", ...extra };
}
/** Waits `ms`, or less when `signal` aborts. */
export function sleep(ms, signal) {
    return new Promise((resolve) => {
        if (signal?.aborted)
            return resolve();
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
export function backoff(attempt, error) {
    if (error?.retryAfter !== undefined)
        return Math.min(error.retryAfter, 30) * 1000;
    return Math.min(5000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2);
}
export async function send(conn, req) {
    for (let attempt = 0;; attempt++) {
        try {
            return await once(conn, req);
        }
        catch (e) {
            const error = e;
            const again = error.isTransport ? req.retry === true : error.status === 429 || error.status === 503;
            if (!again || attempt >= conn.retries)
                throw error;
            await sleep(backoff(attempt, error));
        }
    }
}
async function once(conn, req) {
    const h = headers(conn.token, req.headers);
    let body;
    if (req.method !== "GET") {
        h["content-type"] = req.contentType ?? "application/json";
        body = JSON.stringify(req.body ?? {});
    }
    const timeout = AbortSignal.timeout(conn.timeoutMs + (req.waitMs ?? 0));
    let response;
    try {
        response = await conn.fetch(url(conn.url, req.path, req.query), { method: req.method, headers: h, body, signal: timeout });
    }
    catch (e) {
        throw transportError(`${req.method} ${req.path}`, e);
    }
    if (!response.ok)
        throw await errorOf(response);
    if (response.status === 204)
        return undefined;
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined);
}
//# sourceMappingURL=transport.js.map