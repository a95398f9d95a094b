/**
 * The API's data, exactly as it travels (camelCase JSON), matching the daemon's OpenAPI
 * document (`/openapi.json`; `test/openapi.test.ts` checks every field against a live daemon).
 */
/** `lead`: a person's token, the one role that may decide a person-only gate. */
export type Role = "coordinator" | "tester" | "executor" | "observer" | "lead";
export type TaskStatus = "pending" | "in_progress" | "completed" | "failed" | "cancelled";
/** Statuses a task never leaves. */
export declare const CLOSED: ReadonlySet<TaskStatus>;
export interface Team {
    name: string;
    createdAt: string;
}
export interface Agent {
    name: string;
    role: Role;
    lastSeenAt: string | null;
}
export interface CreatedAgent {
    name: string;
    role: Role;
    /** The agent's bearer token, shown once. */
    token: string;
}
/** A gate's kind: a `question` is released by any answer, an `approval` needs a decision. */
export type GateKind = "question" | "approval";
/** A person's decision: `approve` releases the gated task, `reject` cancels it for good. */
export type Decision = "approve" | "reject";
/** A person's question before a task (`gateTask`, and `gate` of a new task). */
export interface GateRequest {
    question: string;
    /** `question` (the default: any answer releases the task) or `approval` (approve or reject). */
    kind?: GateKind;
    /** Only a person's token (role `lead`) may decide it (absent: any coordinator). */
    personOnly?: boolean;
    /** RFC 3339: when `onDeadline` is taken for the person if no one decided. */
    deadline?: string;
    /** The deadline's decision: `reject` (the default) or `approve` (not on a person-only gate). */
    onDeadline?: Decision;
}
/** A holder's question mid-task (`ask`): a gate's fields and the lease to resume with (ms). */
export interface AskRequest extends GateRequest {
    leaseMs?: number;
}
/** A gate asked: the question (`HUMAN-NNN`, owned by `human`) and the task it now blocks. */
export interface Gated {
    question: Task;
    task: Task;
}
/** The answer to a question: words, a decision, or both (an approval gate needs a decision). */
export interface AnswerRequest {
    answer?: string;
    decision?: Decision;
}
/** A gate that held a task, with the person's decision (`gates` on a claim or task read). */
export interface GateRecord {
    /** The question's id, `HUMAN-NNN`. */
    id: string;
    question: string;
    kind: GateKind;
    /** Only a lead may decide it. */
    personOnly: boolean;
    deadline?: string;
    onDeadline?: Decision;
    status: "open" | "answered" | "withdrawn";
    /** The holder that asked it mid-task (`ask`); absent for a gate asked before the claim. */
    askedByHolder?: string;
    decision: Decision | null;
    answer: string | null;
    answeredBy: string | null;
    answeredAt: string | null;
}
/** A task to create: give `id` (`TEST-007`) or only `prefix` (`TEST`). */
export interface NewTask {
    id?: string;
    prefix?: string;
    subject: string;
    description?: string;
    activeForm?: string;
    owner?: string;
    blockedBy?: string[];
    metadata?: Record<string, unknown>;
    maxAttempts?: number;
    /** Ask a person first: created with this question among its blockers. */
    gate?: GateRequest;
}
export interface Task {
    id: string;
    subject: string;
    description: string;
    activeForm: string | null;
    status: TaskStatus;
    owner: string | null;
    claimedBy: string | null;
    leaseExpiresAt: string | null;
    attempts: number;
    maxAttempts: number;
    blockedBy: string[];
    blocks: string[];
    metadata: Record<string, unknown>;
    result: unknown;
    failureReason: string | null;
    version: number;
    createdAt: string;
    updatedAt: string;
    /** The gates that held it and what was decided; on a claim and a task read. */
    gates?: GateRecord[];
    /** The attempt's W3C trace context, in a claim's answer only: send it back as the
     * `traceparent` header to join the attempt's trace (docs/telemetry.md). */
    traceparent?: string;
}
/** `PATCH …/tasks/{id}`: fields to change; `metadata` is merged. */
export interface TaskPatch {
    subject?: string;
    description?: string;
    activeForm?: string;
    status?: TaskStatus;
    owner?: string | null;
    addBlockedBy?: string[];
    removeBlockedBy?: string[];
    metadata?: Record<string, unknown>;
    /** Complete the task although blockers are not completed (refused otherwise, 409 `blocked`). */
    force?: boolean;
}
export interface TaskList {
    tasks: Task[];
    /** The `after` of the next page; null on the last. */
    next: string | null;
}
export interface Message {
    seq: number;
    id: string;
    from: string;
    to: string;
    type: string;
    summary: string;
    data: Record<string, unknown>;
    createdAt: string;
}
export interface NewMessage {
    /** An agent's name, a role, or `*`. */
    to: string;
    type: string;
    summary: string;
    data?: Record<string, unknown>;
}
export interface MessageList {
    messages: Message[];
    /** The `after` of the next page; null on the last. */
    next: number | null;
}
/**
 * A page of a message search, newest first: `total` counts every match (not only this page);
 * `next` is the `before` of the following page, null on the last.
 */
export interface MessageSearchPage {
    messages: Message[];
    total: number;
    next: number | null;
}
/** The newest event and message `seq`: read them, then a snapshot, then follow the streams after them. */
export interface Cursors {
    events: number;
    messages: number;
}
/** The token's own agent. */
export interface Me {
    name: string;
    role: string;
    /** How the team's workers ask a person mid-task: the wait in force (minutes) and whether the built-in tester asks below the gate. */
    questions: {
        maxWaitMinutes?: number;
        askBelowGate?: boolean;
    };
}
/**
 * One change in the team: `task.created`, `task.claimed`, `task.updated`, `task.completed`,
 * `task.failed`, `task.released`, `task.expired` (data: the task), `message.posted` (the
 * message), `memory.updated` (the change), `agent.created`/`revoked`/`rotated` (the agent).
 */
export interface HuddleEvent {
    seq: number;
    type: string;
    data: unknown;
    createdAt: string;
}
/** The task of a `task.*` event, else undefined. */
export declare function eventTask(event: HuddleEvent): Task | undefined;
/** The message of a `message.posted` event, else undefined. */
export declare function eventMessage(event: HuddleEvent): Message | undefined;
export interface Memory {
    version: number;
    doc: unknown;
}
export interface MemoryChange {
    version: number;
    agent: string;
    kind: string;
    patch: unknown;
    createdAt: string;
}
export interface TestOutcome {
    nodeid: string;
    outcome: "passed" | "failed" | "skipped" | "error";
}
/** A test tier, as `huddle test --tiers` posts its runs. */
export type TestTier = "unit" | "pbt" | "integration" | "e2e";
export interface TestRunSummary {
    id: number;
    project: string;
    tree: string;
    agent: string;
    startedAt: string;
    passed: number;
    failed: number;
    skipped: number;
    errors: number;
    passRate: number;
    /** The test tier the run covered (`unit`, `pbt`, `integration`, `e2e`), when it was one tier's run. */
    tier?: string;
    /** The task the run verified, when it was posted for one. */
    task?: string;
    /** The files the run kept beside its report, when the worker listed them. */
    artifacts?: TestRunArtifacts;
}
/** Where a run's kept files are (on the worker's machine) and what each is. */
export interface TestRunArtifacts {
    runDir: string;
    files: TestRunArtifact[];
}
export interface TestRunArtifact {
    /** Relative to `runDir`. */
    path: string;
    /** `screenshot`, `trace`, `video` or `raw_report`. */
    kind: string;
    bytes: number;
    /** Removed to keep the run under the worker's cap: listed, no longer on disk. */
    removed?: boolean;
}
export interface TestHistory {
    /** The project asked for, or the one posted to last; absent before any run. */
    project?: string;
    projects: string[];
    runs: TestRunSummary[];
    /** The last run's pass rate minus the first's; absent with fewer than two runs. */
    passRateChange?: number;
}
export interface FlakyTest {
    nodeid: string;
    passes: number;
    failures: number;
    trees: number;
    score: number;
}
export interface FlakyTests {
    project?: string;
    tree?: string;
    runs: number;
    tests: FlakyTest[];
    /** Flaky tests left off the end because the answer reached the daemon's page budget. */
    omitted?: number;
}
/** The error code of a reservation (or a model-calling claim) refused because the budget is spent. */
export declare const BUDGET_EXCEEDED = "budget_exceeded";
/** Calls, tokens and cost added up; cost in micro-units (1,000,000 = one dollar when prices are in dollars). */
export interface SpendTotals {
    calls: number;
    promptTokens: number;
    completionTokens: number;
    tokens: number;
    costMicros: number;
}
/** A model's price, in micro-units per million tokens. */
export interface ModelPrice {
    promptPerMillion?: number;
    completionPerMillion?: number;
}
/** The team's budget: limits left out are none. */
export interface BudgetSettings {
    /** What the team limits count over: `total`, or the current UTC `day`. */
    period?: "total" | "day";
    maxTokens?: number | null;
    maxCostMicros?: number | null;
    taskMaxTokens?: number | null;
    taskMaxCostMicros?: number | null;
    /** Warn the coordinators at this share of a team limit (1–100, default 80). */
    warnPercent?: number | null;
    prices?: Record<string, ModelPrice>;
}
export interface BudgetView {
    /** Rises with every change; 0 while no budget was set. */
    version: number;
    budget: BudgetSettings;
    /** `total`, or the day (`2026-11-29`). */
    period: string;
    spent: SpendTotals;
    remainingTokens?: number;
    remainingCostMicros?: number;
    /** A team limit is reached: reservations and model-calling claims are refused. */
    exhausted: boolean;
    updatedBy?: string;
    updatedAt?: string;
}
/** One model call in the ledger. */
export interface SpendCall {
    id: number;
    task?: string;
    agent: string;
    model: string;
    promptTokens: number;
    completionTokens: number;
    costMicros: number;
    day: string;
    createdAt: string;
    /** Whether its tokens were reported (a reservation counts none until then). */
    settled: boolean;
}
/** What one task, agent, model or day spent. */
export interface SpendGroup extends SpendTotals {
    key: string;
}
export interface SpendReport {
    total: SpendTotals;
    byTask: SpendGroup[];
    byAgent: SpendGroup[];
    byModel: SpendGroup[];
    byDay: SpendGroup[];
}
