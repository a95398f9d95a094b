/**
 * The API's data, exactly as it travels (camelCase JSON), matching the daemon's OpenAPI
 * document (`/openapi.json`; `test/openapi.test.ts` checks every field against a live daemon).
 */
/** Statuses a task never leaves. */
export const CLOSED = new Set(["completed", "failed", "cancelled"]);
/** The task of a `task.*` event, else undefined. */
export function eventTask(event) {
    return event.type.startsWith("task.") ? event.data : undefined;
}
/** The message of a `message.posted` event, else undefined. */
export function eventMessage(event) {
    return event.type === "message.posted" ? event.data : undefined;
}
// The model budget and its ledger ---------------------------------------------------------------
/** The error code of a reservation (or a model-calling claim) refused because the budget is spent. */
export const BUDGET_EXCEEDED = "budget_exceeded";
//# sourceMappingURL=models.js.map