/** The client: one method per API operation, typed answers, typed errors. */
import type * as m from "./models.js";
import { type StreamOptions } from "./streams.js";
export interface ClientOptions {
    /** `http://127.0.0.1:7700` */
    url: string;
    /** An agent's token (or the admin token for teams and agents). */
    token: string;
    team?: string;
    /** Per-request timeout, on top of any long-poll wait (default 30 000 ms). */
    timeoutMs?: number;
    /** Tries after the first for requests safe to repeat (default 3). */
    retries?: number;
    /** A fetch implementation (default: the global one). */
    fetch?: typeof fetch;
}
export interface TaskFilter {
    status?: m.TaskStatus;
    owner?: string;
    prefix?: string;
    ready?: boolean;
    limit?: number;
    after?: string;
}
export interface MessageFilter {
    after?: number;
    to?: string;
    from?: string;
    type?: string;
    limit?: number;
    /** The last `limit` messages that match (still oldest first), not the first past `after`. */
    newest?: boolean;
}
/** Filters of `searchMessages`; every one given must match. */
export interface MessageSearch {
    /** Words, each the start of a word in the summary or data, in any order. */
    q?: string;
    from?: string;
    to?: string;
    type?: string;
    /** Messages about this task (`data.taskId` or `data.task`). */
    task?: string;
    /** RFC 3339: created at or after. */
    since?: string;
    /** RFC 3339: created before. */
    until?: string;
    /** Older than this seq: the `next` of the previous page. */
    before?: number;
    limit?: number;
}
/** One message of a batched post. */
export interface BatchMessage extends m.NewMessage {
    idempotencyKey?: string;
}
export interface ClaimOptions {
    /** Id prefixes (`TEST`); default: the role's (tester `TEST`, executor `QARUN`). */
    prefixes?: string[];
    /** Long-poll up to this long for a task. */
    waitMs?: number;
    /** How long the claim lasts unless renewed with `heartbeat` (default: the daemon's, 30 s). */
    leaseMs?: number;
    /** Only tasks whose metadata `project` is this name, or that name none. */
    project?: string;
    /** With `project`: only that project's tasks, not those naming none. */
    strictProject?: boolean;
    /** The model this worker calls: no `TEST`/`QARUN` task while the team's model budget is spent (409 `budget_exceeded`). */
    model?: string;
}
/**
 * A client acting as one agent (its bearer token) in one team. Requests that are safe to
 * repeat (reads, heartbeats, message posts with their idempotency key) are retried when the
 * connection drops or the daemon answers 429/503.
 */
export declare class HuddleClient {
    readonly url: string;
    readonly token: string;
    readonly team?: string;
    private readonly options;
    private readonly conn;
    constructor(options: ClientOptions);
    /** A client from `HUDDLE_URL` (default `http://127.0.0.1:7700`), `HUDDLE_TOKEN` and `HUDDLE_TEAM`, like the `huddle` CLI. */
    static fromEnv(overrides?: Partial<ClientOptions>): HuddleClient;
    withTeam(team: string): HuddleClient;
    withToken(token: string): HuddleClient;
    private t;
    private send;
    createTeam(name: string): Promise<m.Team>;
    listTeams(): Promise<m.Team[]>;
    createAgent(name: string, role: m.Role): Promise<m.CreatedAgent>;
    listAgents(): Promise<m.Agent[]>;
    createTask(task: m.NewTask): Promise<m.Task>;
    /** Several tasks, all or none; `blockedBy` may name tasks of the same batch. */
    createTasks(tasks: m.NewTask[]): Promise<m.Task[]>;
    /** One page in id order; pass `after: page.next` for the next. */
    listTasks(filter?: TaskFilter): Promise<m.TaskList>;
    getTask(id: string): Promise<m.Task>;
    /** With `ifVersion`, refused (412 `stale_version`) when the task moved on. */
    updateTask(id: string, patch: m.TaskPatch, options?: {
        ifVersion?: number;
    }): Promise<m.Task>;
    /** The next task this agent may do, or null. */
    claim(options?: ClaimOptions): Promise<m.Task | null>;
    claimMany(max: number, options?: ClaimOptions): Promise<m.Task[]>;
    /** Extends the lease on a held task. */
    heartbeat(id: string, options?: {
        leaseMs?: number;
    }): Promise<m.Task>;
    complete(id: string, result?: unknown): Promise<m.Task>;
    /** With attempts left and `final` not set the task returns to `pending`; `final: true` (or the last attempt) fails it. */
    fail(id: string, reason: string, options?: {
        final?: boolean;
    }): Promise<m.Task>;
    /** Gives a held task back without using an attempt. */
    release(id: string, note?: string): Promise<m.Task>;
    /**
     * Holds pending task `id` until a person answers `question`: `kind` `question` (the default;
     * any answer releases the task) or `approval` (`approve` releases it, `reject` cancels it). The
     * question is a task of its own, `HUMAN-NNN` owned by `human`, now in the task's `blockedBy`;
     * open ones: `listTasks({ owner: "human", status: "pending" })`. `personOnly`: only a person's
     * token (role `lead`) may decide it.
     */
    gateTask(id: string, question: string, options?: {
        kind?: m.GateKind;
        personOnly?: boolean;
        deadline?: string;
        onDeadline?: m.Decision;
    }): Promise<m.Gated>;
    /**
     * Answers question `id` (`HUMAN-NNN`) with words, a decision or both; resolves to the answered
     * question. An approval gate without a decision is refused (400 `invalid_field`); a withdrawn
     * question, or one whose task was edited since it was asked, with 409.
     */
    answer(id: string, answer: m.AnswerRequest): Promise<m.Task>;
    /** Approves question `id`: the task it held may be claimed now. */
    approve(id: string, answer?: string): Promise<m.Task>;
    /** Rejects question `id`: the task it held is cancelled for good, `reason` (or "rejected at HUMAN-NNN") its `failureReason`. */
    reject(id: string, reason?: string): Promise<m.Task>;
    /**
     * Asks a person about task `id`, which this agent holds, and keeps it while waiting: the
     * question (`HUMAN-NNN`) blocks the task and the lease lasts until its deadline (at most the
     * team's `questions.maxWaitMinutes` ahead, which is the default; then `onDeadline`, `reject`
     * by default, is taken). The decision neither releases nor cancels the task: read it with
     * `decision`. One open question per task.
     */
    ask(id: string, question: string, options?: {
        kind?: m.GateKind;
        personOnly?: boolean;
        deadline?: string;
        onDeadline?: m.Decision;
        leaseMs?: number;
    }): Promise<m.Gated>;
    /**
     * Where question `id` stands (`status` `open`, `answered` or `withdrawn`); with `waitMs`,
     * waits while it is open (at most the daemon's long-poll bound). Loop until not `open`.
     */
    decision(id: string, options?: {
        waitMs?: number;
    }): Promise<m.GateRecord>;
    /** A post repeated with the same `idempotencyKey` is stored once (one is made per call, so retries never duplicate). */
    postMessage(message: m.NewMessage, options?: {
        idempotencyKey?: string;
    }): Promise<m.Message>;
    listMessages(filter?: MessageFilter): Promise<m.MessageList>;
    /** Every message of the team matching the filters, newest first, with the exact `total`. */
    searchMessages(filter?: MessageSearch): Promise<m.MessageSearchPage>;
    /** Several messages in one request, stored all or none, in order; each gets an idempotency key. */
    postMessages(messages: BatchMessage[]): Promise<m.Message[]>;
    /** Where both streams are now: follow them after these once a snapshot is read. */
    cursors(): Promise<m.Cursors>;
    /** This token's agent: its name and role. */
    me(): Promise<m.Me>;
    /** One task's `task.*` events, newest first, each with the task as it became. */
    taskEvents(id: string, options?: {
        limit?: number;
    }): Promise<m.HuddleEvent[]>;
    /** Unacknowledged messages to this agent, its role or `*`; waits up to `waitMs` for a first one. */
    inbox(options?: {
        waitMs?: number;
        limit?: number;
    }): Promise<m.Message[]>;
    ack(seq: number): Promise<void>;
    memory(): Promise<m.Memory>;
    /** The value at a JSON Pointer (`/test_strategy/framework`). */
    memoryAt(pointer: string): Promise<unknown>;
    /** A JSON Merge Patch (RFC 7396: null removes a key). */
    mergeMemory(patch: Record<string, unknown>, options?: {
        ifVersion?: number;
    }): Promise<m.Memory>;
    /** A JSON Patch (RFC 6902: `[{op: "add", path: "/a", value: 1}]`). */
    patchMemory(operations: Record<string, unknown>[], options?: {
        ifVersion?: number;
    }): Promise<m.Memory>;
    replaceMemory(doc: unknown, options?: {
        ifVersion?: number;
    }): Promise<m.Memory>;
    memoryHistory(options?: {
        limit?: number;
    }): Promise<m.MemoryChange[]>;
    /** Records a run's per-test outcomes; `tier` when it was one test tier's run. */
    postTestRun(run: {
        project: string;
        tree: string;
        startedAt?: string;
        tier?: m.TestTier;
        outcomes: m.TestOutcome[];
    }): Promise<unknown>;
    /** The project's kept runs, oldest first; `tier`: only that test tier's runs. */
    testHistory(project?: string, options?: {
        tier?: m.TestTier;
    }): Promise<m.TestHistory>;
    /** Tests that passed and failed on one tree; `tier`: only that test tier's runs count. */
    flakyTests(options?: {
        project?: string;
        tree?: string;
        tier?: m.TestTier;
    }): Promise<m.FlakyTests>;
    /** Tests failing in the latest run that passed before; `tier`: within that test tier. */
    regressions(project?: string, options?: {
        tier?: m.TestTier;
    }): Promise<unknown>;
    /** The budget, what the team spent in its period and whether model calls are refused now. */
    budget(): Promise<m.BudgetView>;
    /** Replaces the budget (coordinator, lead); with `ifVersion`, 412 when it changed meanwhile. */
    setBudget(budget: m.BudgetSettings, options?: {
        ifVersion?: number;
    }): Promise<m.BudgetView>;
    /** Reserves one model call before making it; a `HuddleError` with code `budget_exceeded` when spent. */
    reserveSpend(model: string, options?: {
        task?: string;
    }): Promise<m.SpendCall>;
    /** Records the tokens reserved call `id` used. */
    settleSpend(id: number, tokens: {
        promptTokens: number;
        completionTokens: number;
    }): Promise<m.SpendCall>;
    /** Totals, by task, agent, model and day (one task's calls with `task`). */
    spendReport(options?: {
        task?: string;
    }): Promise<m.SpendReport>;
    /** Every change in the team from `after` on, live, resuming across drops; `type` filters (`task.completed`, or a family: `task.`). */
    events(options?: StreamOptions & {
        type?: string;
    }): AsyncGenerator<m.HuddleEvent, void, undefined>;
    /** The team's messages from `after` on, live, resuming across drops. */
    messages(options?: StreamOptions & {
        to?: string;
        from?: string;
        type?: string;
    }): AsyncGenerator<m.Message, void, undefined>;
}
