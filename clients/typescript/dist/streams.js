/**
 * The team's Server-Sent Event streams (`/events`, `/messages/stream`) as async iterables that
 * survive drops: each item's `id` is its sequence number, and after a dropped connection, a
 * daemon restart or an idle connection the stream reconnects with `Last-Event-ID` set to the
 * last item it gave, so nothing is lost or repeated. Refusals (401, 403, 404, 400) throw at
 * once; the daemon being away throws only after `reconnectForMs` without success.
 */
import { createParser } from "eventsource-parser";
import { errorOf, HuddleError, transportError } from "./errors.js";
import { backoff, headers, sleep, url } from "./transport.js";
export async function* follow(conn, path, query, options = {}) {
    let cursor = options.after ?? 0;
    let failingSince;
    let failures = 0;
    const reconnectFor = options.reconnectForMs ?? 300_000;
    const idle = options.idleTimeoutMs ?? 60_000;
    while (!options.signal?.aborted) {
        let error;
        const connection = new AbortController();
        const stop = () => connection.abort();
        options.signal?.addEventListener("abort", stop, { once: true });
        let idleTimer;
        const armIdle = () => {
            clearTimeout(idleTimer);
            idleTimer = setTimeout(stop, idle);
        };
        try {
            armIdle();
            const response = await conn.fetch(url(conn.url, path, query), {
                headers: headers(conn.token, { accept: "text/event-stream", "last-event-id": String(cursor) }),
                signal: connection.signal,
            });
            if (!response.ok)
                throw await errorOf(response);
            if (!response.body)
                throw transportError(path, "no body");
            const queue = [];
            const parser = createParser({ onEvent: (e) => queue.push(e) });
            const decoder = new TextDecoder();
            const reader = response.body.getReader();
            try {
                for (;;) {
                    const { done, value } = await reader.read();
                    if (done)
                        break;
                    armIdle();
                    parser.feed(decoder.decode(value, { stream: true }));
                    while (queue.length > 0) {
                        const e = queue.shift();
                        if (!e.data)
                            continue;
                        if (e.id)
                            cursor = Number(e.id);
                        failures = 0;
                        failingSince = undefined;
                        yield JSON.parse(e.data);
                    }
                }
            }
            finally {
                connection.abort();
                reader.releaseLock?.();
            }
            error = transportError(path, "the stream ended");
        }
        catch (e) {
            error = e instanceof HuddleError ? e : transportError(path, e);
        }
        finally {
            clearTimeout(idleTimer);
            options.signal?.removeEventListener("abort", stop);
        }
        if (options.signal?.aborted)
            return;
        if (!error.isRetryable)
            throw error;
        const now = Date.now();
        failingSince ??= now;
        if (now - failingSince > reconnectFor) {
            throw new HuddleError(0, "transport", `stream lost for over ${Math.round(reconnectFor / 1000)}s: ${error.message}`);
        }
        failures += 1;
        await sleep(backoff(Math.min(failures, 6), error), options.signal);
    }
}
//# sourceMappingURL=streams.js.map