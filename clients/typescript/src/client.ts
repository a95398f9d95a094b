/** The client: one method per API operation, typed answers, typed errors. */
import type * as m from "./models.js";
import { follow, type StreamOptions } from "./streams.js";
import { send, type Connection, type Request } from "./transport.js";

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

const seg = encodeURIComponent;

function ifMatch(version?: number): Record<string, string> {
  return version === undefined ? {} : { "if-match": `"${version}"` };
}

function newKey(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  return c?.randomUUID?.() ?? `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
}

/**
 * A client acting as one agent (its bearer token) in one team. Requests that are safe to
 * repeat (reads, heartbeats, message posts with their idempotency key) are retried when the
 * connection drops or the daemon answers 429/503.
 */
export class HuddleClient {
  readonly url: string;
  readonly token: string;
  readonly team?: string;
  private readonly options: ClientOptions;
  private readonly conn: Connection;

  constructor(options: ClientOptions) {
    this.options = options;
    this.url = options.url.replace(/\/+$/, "");
    this.token = options.token;
    this.team = options.team;
    this.conn = {
      url: this.url,
      token: this.token,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      timeoutMs: options.timeoutMs ?? 30_000,
      retries: options.retries ?? 3,
    };
  }

  /** A client from `HUDDLE_URL` (default `http://127.0.0.1:7700`), `HUDDLE_TOKEN` and `HUDDLE_TEAM`, like the `huddle` CLI. */
  static fromEnv(overrides: Partial<ClientOptions> = {}): HuddleClient {
    const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
    const token = overrides.token ?? env.HUDDLE_TOKEN;
    if (!token) throw new Error("HUDDLE_TOKEN is not set: export an agent's token (or the admin token)");
    return new HuddleClient({
      ...overrides,
      url: overrides.url ?? (env.HUDDLE_URL || "http://127.0.0.1:7700"),
      token,
      team: overrides.team ?? (env.HUDDLE_TEAM || undefined),
    });
  }

  withTeam(team: string): HuddleClient {
    return new HuddleClient({ ...this.options, team });
  }

  withToken(token: string): HuddleClient {
    return new HuddleClient({ ...this.options, token });
  }

  private t(rest = ""): string {
    if (!this.team) throw new Error("this call needs a team: pass `team` to the client");
    return `/v1/teams/${seg(this.team)}${rest}`;
  }

  private send<T>(req: Request): Promise<T> {
    return send<T>(this.conn, req);
  }

  // Teams and agents -------------------------------------------------------------------------
  createTeam(name: string): Promise<m.Team> {
    return this.send({ method: "POST", path: "/v1/teams", body: { name } });
  }

  async listTeams(): Promise<m.Team[]> {
    return (await this.send<{ teams: m.Team[] }>({ method: "GET", path: "/v1/teams", retry: true })).teams;
  }

  createAgent(name: string, role: m.Role): Promise<m.CreatedAgent> {
    return this.send({ method: "POST", path: this.t("/agents"), body: { name, role } });
  }

  async listAgents(): Promise<m.Agent[]> {
    return (await this.send<{ agents: m.Agent[] }>({ method: "GET", path: this.t("/agents"), retry: true })).agents;
  }

  // Tasks ------------------------------------------------------------------------------------
  createTask(task: m.NewTask): Promise<m.Task> {
    return this.send({ method: "POST", path: this.t("/tasks"), body: task });
  }

  /** Several tasks, all or none; `blockedBy` may name tasks of the same batch. */
  createTasks(tasks: m.NewTask[]): Promise<m.Task[]> {
    return this.send({ method: "POST", path: this.t("/tasks"), body: tasks });
  }

  /** One page in id order; pass `after: page.next` for the next. */
  listTasks(filter: TaskFilter = {}): Promise<m.TaskList> {
    return this.send({ method: "GET", path: this.t("/tasks"), query: { ...filter }, retry: true });
  }

  getTask(id: string): Promise<m.Task> {
    return this.send({ method: "GET", path: this.t(`/tasks/${seg(id)}`), retry: true });
  }

  /** With `ifVersion`, refused (412 `stale_version`) when the task moved on. */
  updateTask(id: string, patch: m.TaskPatch, options: { ifVersion?: number } = {}): Promise<m.Task> {
    return this.send({ method: "PATCH", path: this.t(`/tasks/${seg(id)}`), body: patch, headers: ifMatch(options.ifVersion) });
  }

  /** The next task this agent may do, or null. */
  async claim(options: ClaimOptions = {}): Promise<m.Task | null> {
    const task = await this.send<m.Task | undefined>({ method: "POST", path: this.t("/tasks/claim"), body: options, waitMs: options.waitMs });
    return task ?? null;
  }

  async claimMany(max: number, options: ClaimOptions = {}): Promise<m.Task[]> {
    const body = { ...options, max };
    const got = await this.send<{ tasks: m.Task[] } | undefined>({ method: "POST", path: this.t("/tasks/claim"), body, waitMs: options.waitMs });
    return got?.tasks ?? [];
  }

  /** Extends the lease on a held task. */
  heartbeat(id: string, options: { leaseMs?: number } = {}): Promise<m.Task> {
    return this.send({ method: "POST", path: this.t(`/tasks/${seg(id)}/heartbeat`), body: options, retry: true });
  }

  complete(id: string, result?: unknown): Promise<m.Task> {
    const body = result === undefined ? {} : { result };
    return this.send({ method: "POST", path: this.t(`/tasks/${seg(id)}/complete`), body });
  }

  /** With attempts left and `final` not set the task returns to `pending`; `final: true` (or the last attempt) fails it. */
  fail(id: string, reason: string, options: { final?: boolean } = {}): Promise<m.Task> {
    // `final` goes only when true: without it the daemon retries while attempts remain.
    const body = options.final ? { reason, final: true } : { reason };
    return this.send({ method: "POST", path: this.t(`/tasks/${seg(id)}/fail`), body });
  }

  /** Gives a held task back without using an attempt. */
  release(id: string, note?: string): Promise<m.Task> {
    const body = note === undefined ? {} : { note };
    return this.send({ method: "POST", path: this.t(`/tasks/${seg(id)}/release`), body });
  }

  // Human gates (a coordinator asks; a person answers) ---------------------------------------
  /**
   * Holds pending task `id` until a person answers `question`: `kind` `question` (the default;
   * any answer releases the task) or `approval` (`approve` releases it, `reject` cancels it). The
   * question is a task of its own, `HUMAN-NNN` owned by `human`, now in the task's `blockedBy`;
   * open ones: `listTasks({ owner: "human", status: "pending" })`. `personOnly`: only a person's
   * token (role `lead`) may decide it.
   */
  gateTask(
    id: string,
    question: string,
    options: { kind?: m.GateKind; personOnly?: boolean; deadline?: string; onDeadline?: m.Decision } = {},
  ): Promise<m.Gated> {
    // Options go only when given (`personOnly` only when true, like `final`).
    const body: m.GateRequest = { question };
    if (options.kind !== undefined) body.kind = options.kind;
    if (options.personOnly) body.personOnly = true;
    if (options.deadline !== undefined) body.deadline = options.deadline;
    if (options.onDeadline !== undefined) body.onDeadline = options.onDeadline;
    return this.send({ method: "POST", path: this.t(`/tasks/${seg(id)}/gate`), body });
  }

  /**
   * Answers question `id` (`HUMAN-NNN`) with words, a decision or both; resolves to the answered
   * question. An approval gate without a decision is refused (400 `invalid_field`); a withdrawn
   * question, or one whose task was edited since it was asked, with 409.
   */
  answer(id: string, answer: m.AnswerRequest): Promise<m.Task> {
    // Not retried: a second answer to the same question is refused (409).
    return this.send({ method: "POST", path: this.t(`/tasks/${seg(id)}/answer`), body: answer });
  }

  /** Approves question `id`: the task it held may be claimed now. */
  approve(id: string, answer?: string): Promise<m.Task> {
    return this.answer(id, answer === undefined ? { decision: "approve" } : { decision: "approve", answer });
  }

  /** Rejects question `id`: the task it held is cancelled for good, `reason` (or "rejected at HUMAN-NNN") its `failureReason`. */
  reject(id: string, reason?: string): Promise<m.Task> {
    return this.answer(id, reason === undefined ? { decision: "reject" } : { decision: "reject", answer: reason });
  }

  /**
   * Asks a person about task `id`, which this agent holds, and keeps it while waiting: the
   * question (`HUMAN-NNN`) blocks the task and the lease lasts until its deadline (at most the
   * team's `questions.maxWaitMinutes` ahead, which is the default; then `onDeadline`, `reject`
   * by default, is taken). The decision neither releases nor cancels the task: read it with
   * `decision`. One open question per task.
   */
  ask(
    id: string,
    question: string,
    options: {
      kind?: m.GateKind;
      personOnly?: boolean;
      deadline?: string;
      onDeadline?: m.Decision;
      leaseMs?: number;
    } = {},
  ): Promise<m.Gated> {
    const body: m.AskRequest = { question };
    if (options.kind !== undefined) body.kind = options.kind;
    if (options.personOnly) body.personOnly = true;
    if (options.deadline !== undefined) body.deadline = options.deadline;
    if (options.onDeadline !== undefined) body.onDeadline = options.onDeadline;
    if (options.leaseMs !== undefined) body.leaseMs = options.leaseMs;
    // Not retried: a second question while one is open is refused (409).
    return this.send({ method: "POST", path: this.t(`/tasks/${seg(id)}/ask`), body });
  }

  /**
   * Where question `id` stands (`status` `open`, `answered` or `withdrawn`); with `waitMs`,
   * waits while it is open (at most the daemon's long-poll bound). Loop until not `open`.
   */
  decision(id: string, options: { waitMs?: number } = {}): Promise<m.GateRecord> {
    const query = options.waitMs ? { waitMs: options.waitMs } : {};
    return this.send({ method: "GET", path: this.t(`/tasks/${seg(id)}/decision`), query, retry: true });
  }

  // Messages ---------------------------------------------------------------------------------
  /** A post repeated with the same `idempotencyKey` is stored once (one is made per call, so retries never duplicate). */
  postMessage(message: m.NewMessage, options: { idempotencyKey?: string } = {}): Promise<m.Message> {
    const body = { ...message, data: message.data ?? {} };
    const headers = { "idempotency-key": options.idempotencyKey ?? newKey() };
    return this.send({ method: "POST", path: this.t("/messages"), body, headers, retry: true });
  }

  listMessages(filter: MessageFilter = {}): Promise<m.MessageList> {
    return this.send({ method: "GET", path: this.t("/messages"), query: { ...filter }, retry: true });
  }

  /** Every message of the team matching the filters, newest first, with the exact `total`. */
  searchMessages(filter: MessageSearch = {}): Promise<m.MessageSearchPage> {
    return this.send({ method: "GET", path: this.t("/messages/search"), query: { ...filter }, retry: true });
  }

  /** Several messages in one request, stored all or none, in order; each gets an idempotency key. */
  async postMessages(messages: BatchMessage[]): Promise<m.Message[]> {
    const batch = messages.map((x) => ({ ...x, data: x.data ?? {}, idempotencyKey: x.idempotencyKey ?? newKey() }));
    const got = await this.send<{ messages: m.Message[] }>({
      method: "POST",
      path: this.t("/messages/batch"),
      body: { messages: batch },
      retry: true,
    });
    return got.messages;
  }

  /** Where both streams are now: follow them after these once a snapshot is read. */
  cursors(): Promise<m.Cursors> {
    return this.send({ method: "GET", path: this.t("/cursors"), retry: true });
  }

  /** This token's agent: its name and role. */
  me(): Promise<m.Me> {
    return this.send({ method: "GET", path: this.t("/me"), retry: true });
  }

  /** One task's `task.*` events, newest first, each with the task as it became. */
  async taskEvents(id: string, options: { limit?: number } = {}): Promise<m.HuddleEvent[]> {
    const got = await this.send<{ events: m.HuddleEvent[] }>({
      method: "GET",
      path: this.t(`/tasks/${encodeURIComponent(id)}/events`),
      query: { ...options },
      retry: true,
    });
    return got.events;
  }

  /** Unacknowledged messages to this agent, its role or `*`; waits up to `waitMs` for a first one. */
  async inbox(options: { waitMs?: number; limit?: number } = {}): Promise<m.Message[]> {
    const got = await this.send<{ messages: m.Message[] }>({
      method: "GET",
      path: this.t("/inbox"),
      query: { ...options },
      retry: true,
      waitMs: options.waitMs,
    });
    return got.messages;
  }

  async ack(seq: number): Promise<void> {
    await this.send({ method: "POST", path: this.t("/inbox/ack"), body: { seq }, retry: true });
  }

  // Shared memory ----------------------------------------------------------------------------
  memory(): Promise<m.Memory> {
    return this.send({ method: "GET", path: this.t("/memory"), retry: true });
  }

  /** The value at a JSON Pointer (`/test_strategy/framework`). */
  memoryAt(pointer: string): Promise<unknown> {
    if (!pointer.startsWith("/")) throw new Error(`a JSON Pointer starts with '/': ${pointer}`);
    const path = pointer.slice(1).split("/").map(seg).join("/");
    return this.send({ method: "GET", path: this.t(`/memory/${path}`), retry: true });
  }

  /** A JSON Merge Patch (RFC 7396: null removes a key). */
  mergeMemory(patch: Record<string, unknown>, options: { ifVersion?: number } = {}): Promise<m.Memory> {
    return this.send({
      method: "PATCH",
      path: this.t("/memory"),
      body: patch,
      contentType: "application/merge-patch+json",
      headers: ifMatch(options.ifVersion),
    });
  }

  /** A JSON Patch (RFC 6902: `[{op: "add", path: "/a", value: 1}]`). */
  patchMemory(operations: Record<string, unknown>[], options: { ifVersion?: number } = {}): Promise<m.Memory> {
    return this.send({
      method: "PATCH",
      path: this.t("/memory"),
      body: operations,
      contentType: "application/json-patch+json",
      headers: ifMatch(options.ifVersion),
    });
  }

  replaceMemory(doc: unknown, options: { ifVersion?: number } = {}): Promise<m.Memory> {
    return this.send({ method: "PUT", path: this.t("/memory"), body: { doc }, headers: ifMatch(options.ifVersion) });
  }

  async memoryHistory(options: { limit?: number } = {}): Promise<m.MemoryChange[]> {
    const got = await this.send<{ changes: m.MemoryChange[] }>({ method: "GET", path: this.t("/memory-history"), query: { ...options }, retry: true });
    return got.changes;
  }

  // Test history -----------------------------------------------------------------------------
  /** Records a run's per-test outcomes; `tier` when it was one test tier's run. */
  postTestRun(run: { project: string; tree: string; startedAt?: string; tier?: m.TestTier; outcomes: m.TestOutcome[] }): Promise<unknown> {
    return this.send({ method: "POST", path: this.t("/history/runs"), body: run });
  }

  /** The project's kept runs, oldest first; `tier`: only that test tier's runs. */
  testHistory(project?: string, options: { tier?: m.TestTier } = {}): Promise<m.TestHistory> {
    return this.send({ method: "GET", path: this.t("/history"), query: { project, ...options }, retry: true });
  }

  /** Tests that passed and failed on one tree; `tier`: only that test tier's runs count. */
  flakyTests(options: { project?: string; tree?: string; tier?: m.TestTier } = {}): Promise<m.FlakyTests> {
    return this.send({ method: "GET", path: this.t("/history/flaky"), query: { ...options }, retry: true });
  }

  /** Tests failing in the latest run that passed before; `tier`: within that test tier. */
  regressions(project?: string, options: { tier?: m.TestTier } = {}): Promise<unknown> {
    return this.send({ method: "GET", path: this.t("/history/regressions"), query: { project, ...options }, retry: true });
  }

  // The model budget and its ledger ---------------------------------------------------------
  /** The budget, what the team spent in its period and whether model calls are refused now. */
  budget(): Promise<m.BudgetView> {
    return this.send({ method: "GET", path: this.t("/budget"), retry: true });
  }

  /** Replaces the budget (coordinator, lead); with `ifVersion`, 412 when it changed meanwhile. */
  setBudget(budget: m.BudgetSettings, options: { ifVersion?: number } = {}): Promise<m.BudgetView> {
    return this.send({ method: "PUT", path: this.t("/budget"), body: budget, headers: ifMatch(options.ifVersion) });
  }

  /** Reserves one model call before making it; a `HuddleError` with code `budget_exceeded` when spent. */
  reserveSpend(model: string, options: { task?: string } = {}): Promise<m.SpendCall> {
    return this.send({ method: "POST", path: this.t("/spend/reserve"), body: { model, ...options } });
  }

  /** Records the tokens reserved call `id` used. */
  settleSpend(id: number, tokens: { promptTokens: number; completionTokens: number }): Promise<m.SpendCall> {
    return this.send({ method: "POST", path: this.t(`/spend/${seg(String(id))}/settle`), body: tokens });
  }

  /** Totals, by task, agent, model and day (one task's calls with `task`). */
  spendReport(options: { task?: string } = {}): Promise<m.SpendReport> {
    return this.send({ method: "GET", path: this.t("/spend"), query: { ...options }, retry: true });
  }

  // Streams ----------------------------------------------------------------------------------
  /** Every change in the team from `after` on, live, resuming across drops; `type` filters (`task.completed`, or a family: `task.`). */
  events(options: StreamOptions & { type?: string } = {}): AsyncGenerator<m.HuddleEvent, void, undefined> {
    return follow<m.HuddleEvent>(this.conn, this.t("/events"), { type: options.type }, options);
  }

  /** The team's messages from `after` on, live, resuming across drops. */
  messages(options: StreamOptions & { to?: string; from?: string; type?: string } = {}): AsyncGenerator<m.Message, void, undefined> {
    const query = { to: options.to, from: options.from, type: options.type };
    return follow<m.Message>(this.conn, this.t("/messages/stream"), query, options);
  }
}
