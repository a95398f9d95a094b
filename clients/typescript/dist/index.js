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
export { HuddleError } from "./errors.js";
export * from "./models.js";
export { FinalFailure, RetryTask, Worker } from "./worker.js";
//# sourceMappingURL=index.js.map