/** Sending one request: headers, the error shape, and retries of requests safe to repeat. */
import { HuddleError } from "./errors.js";
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
export declare function url(base: string, path: string, query?: Request["query"]): string;
export declare function headers(token: string, extra?: Record<string, string>): Record<string, string>;
/** Waits `ms`, or less when `signal` aborts. */
export declare function sleep(ms: number, signal?: AbortSignal): Promise<void>;
/** Milliseconds before the next try: `Retry-After` when given, else exponential with jitter. */
export declare function backoff(attempt: number, error?: HuddleError): number;
export declare function send<T>(conn: Connection, req: Request): Promise<T>;
