import { type Connection } from "./transport.js";
export interface StreamOptions {
    /** Start after this sequence number (default 0: from the team's first item). */
    after?: number;
    /** Give up after this long without reconnecting (default 300 000 ms). */
    reconnectForMs?: number;
    /** Reconnect when nothing, not even a keep-alive (every 15 s by default), came for this long (default 60 000 ms). */
    idleTimeoutMs?: number;
    /** Ends the stream. */
    signal?: AbortSignal;
}
export declare function follow<T>(conn: Connection, path: string, query: Record<string, string | undefined>, options?: StreamOptions): AsyncGenerator<T, void, undefined>;
