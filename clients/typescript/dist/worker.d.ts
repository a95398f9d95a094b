/**
 * A worker loop: claim the next task (long poll), keep its lease alive with heartbeats, run the
 * handler, then complete or fail the task; stop gracefully on request.
 *
 * - the handler returns a value → the task is completed with it as `result`;
 * - it throws `RetryTask` (or any other error) → the task is failed without `final`: with
 *   attempts left it returns to `pending` for another try;
 * - it throws `FinalFailure` → the task is failed for good, and what it blocks never starts.
 */
import type { HuddleClient } from "./client.js";
import type { Task } from "./models.js";
/** Throw from a handler to give the task back for another attempt. */
export declare class RetryTask extends Error {
    constructor(message: string);
}
/** Throw from a handler to fail the task for good. */
export declare class FinalFailure extends Error {
    constructor(message: string);
}
export interface TaskContext {
    client: HuddleClient;
    /** Aborts when the lease is lost (expired, task cancelled) or the worker stops. */
    signal: AbortSignal;
}
export type Handler = (task: Task, ctx: TaskContext) => unknown | Promise<unknown>;
export interface WorkerOptions {
    prefixes?: string[];
    /** Claim only tasks whose metadata `project` is this name, or that name none. */
    project?: string;
    /** With `project`: only that project's tasks. */
    strictProject?: boolean;
    /** Each claim's long poll (default 5 000 ms); a stop takes effect within it at most. */
    waitMs?: number;
    /** The lease asked for (default: the daemon's); heartbeats go every third of it. */
    leaseMs?: number;
    /** Where the worker says what it does (default: console.error); `() => {}` silences it. */
    log?: (line: string) => void;
}
export interface WorkerStats {
    completed: number;
    /** Failed for good. */
    failed: number;
    /** Failed with attempts left: back in the queue. */
    retried: number;
    /** Lost to an expired lease before the outcome could be reported. */
    lost: number;
}
export declare class Worker {
    private readonly client;
    private readonly handler;
    private readonly options;
    readonly stats: WorkerStats;
    private readonly stopping;
    private readonly log;
    constructor(client: HuddleClient, handler: Handler, options?: WorkerOptions);
    /** Claims nothing more; the task in hand finishes first. */
    stop(): void;
    /** Works until `stop()`; resolves with what it did. */
    run(): Promise<WorkerStats>;
    private work;
    private complete;
    private fail;
    /** Renews the lease every third of it until `lease` aborts; aborts it when the task is lost. */
    private heartbeat;
}
