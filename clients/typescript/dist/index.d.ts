/**
 * huddle-client: a typed client for huddle, the coordination daemon for AI agent teams.
 *
 * ```ts
 * import { HuddleClient, eventTask } from "huddle-client";
 * const client = HuddleClient.fromEnv(); // HUDDLE_URL, HUDDLE_TOKEN, HUDDLE_TEAM
 * for await (const event of client.events({ type: "task." })) console.log(event.type, eventTask(event)?.id);
 * ```
 */
export { HuddleClient } from "./client.js";
export type { BatchMessage, ClaimOptions, ClientOptions, MessageFilter, MessageSearch, TaskFilter } from "./client.js";
export { HuddleError } from "./errors.js";
export * from "./models.js";
export type { StreamOptions } from "./streams.js";
export { FinalFailure, RetryTask, Worker } from "./worker.js";
export type { Handler, TaskContext, WorkerOptions, WorkerStats } from "./worker.js";
