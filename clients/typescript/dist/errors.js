/**
 * The API's one error shape, `{"error": {"code", "message", "details"}}`, as an exception.
 * `status` is the HTTP status (0 when the daemon could not be reached), `code` the
 * machine-readable reason (`not_holder`, `stale_version`, `dependency_cycle`…), `details` the
 * structured rest (the offending field, the cycle, the current version…).
 */
export class HuddleError extends Error {
    status;
    code;
    details;
    /** Seconds the daemon asked to wait (`Retry-After`, with 429 and 503). */
    retryAfter;
    constructor(status, code, message, details = {}, retryAfter) {
        // The message alone: the status is a property, not repeated in the text.
        super(message);
        this.name = "HuddleError";
        this.status = status;
        this.code = code;
        this.details = details;
        this.retryAfter = retryAfter;
    }
    /** The daemon could not be reached, or the connection dropped before an answer. */
    get isTransport() {
        return this.status === 0;
    }
    /** Worth trying again: the daemon was away or asked to wait (0, 429, 503). */
    get isRetryable() {
        return this.status === 0 || this.status === 429 || this.status === 503;
    }
}
/** The exception for an error answer; a body outside the error shape keeps its status. */
export async function errorOf(response) {
    let body;
    try {
        body = await response.json();
    }
    catch {
        body = undefined;
    }
    const info = body?.error;
    const retry = response.headers.get("retry-after");
    const retryAfter = retry !== null && !Number.isNaN(Number(retry)) ? Number(retry) : undefined;
    if (info && typeof info === "object") {
        const details = info.details && typeof info.details === "object" ? info.details : {};
        return new HuddleError(response.status, String(info.code ?? "unknown"), String(info.message ?? ""), details, retryAfter);
    }
    return new HuddleError(response.status, "unknown", `unexpected answer with status ${response.status}`, {}, retryAfter);
}
export function transportError(what, cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return new HuddleError(0, "transport", `${what}: ${reason}`);
}
//# sourceMappingURL=errors.js.map