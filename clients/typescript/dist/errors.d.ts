/**
 * The API's one error shape, `{"error": {"code", "message", "details"}}`, as an exception.
 * `status` is the HTTP status (0 when the daemon could not be reached), `code` the
 * machine-readable reason (`not_holder`, `stale_version`, `dependency_cycle`…), `details` the
 * structured rest (the offending field, the cycle, the current version…).
 */
export declare class HuddleError extends Error {
    readonly status: number;
    readonly code: string;
    readonly details: Record<string, unknown>;
    /** Seconds the daemon asked to wait (`Retry-After`, with 429 and 503). */
    readonly retryAfter?: number;
    constructor(status: number, code: string, message: string, details?: Record<string, unknown>, retryAfter?: number);
    /** The daemon could not be reached, or the connection dropped before an answer. */
    get isTransport(): boolean;
    /** Worth trying again: the daemon was away or asked to wait (0, 429, 503). */
    get isRetryable(): boolean;
}
/** The exception for an error answer; a body outside the error shape keeps its status. */
export declare function errorOf(response: Response): Promise<HuddleError>;
export declare function transportError(what: string, cause: unknown): HuddleError;
