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
import { HuddleError } from "./errors.js";
import type { Task } from "./models.js";
import { backoff, sleep } from "./transport.js";

/** Throw from a handler to give the task back for another attempt. */
export class RetryTask extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RetryTask";
  }
}

/** Throw from a handler to fail the task for good. */
export class FinalFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FinalFailure";
  }
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

export class Worker {
  readonly stats: WorkerStats = { completed: 0, failed: 0, retried: 0, lost: 0 };
  private readonly stopping = new AbortController();
  private readonly log: (line: string) => void;

  constructor(
    private readonly client: HuddleClient,
    private readonly handler: Handler,
    private readonly options: WorkerOptions = {},
  ) {
    this.log = options.log ?? ((line) => console.error(`huddle worker: ${line}`));
  }

  /** Claims nothing more; the task in hand finishes first. */
  stop(): void {
    this.stopping.abort();
  }

  /** Works until `stop()`; resolves with what it did. */
  async run(): Promise<WorkerStats> {
    this.log(`started in team ${this.client.team}`);
    let away = 0;
    while (!this.stopping.signal.aborted) {
      let task: Task | null;
      try {
        const { prefixes, project, strictProject, leaseMs } = this.options;
        task = await this.client.claim({ prefixes, project, strictProject, waitMs: this.options.waitMs ?? 5000, leaseMs });
      } catch (e) {
        if (!(e instanceof HuddleError) || !e.isRetryable) throw e;
        away += 1;
        this.log(`claim failed (${e.message}); retrying`);
        await sleep(backoff(Math.min(away, 6), e), this.stopping.signal);
        continue;
      }
      away = 0;
      if (task) await this.work(task);
    }
    const s = this.stats;
    this.log(`stopped: ${s.completed} completed, ${s.failed} failed, ${s.retried} retried, ${s.lost} lost`);
    return s;
  }

  private async work(task: Task): Promise<void> {
    this.log(`claimed ${task.id} (attempt ${task.attempts + 1} of ${task.maxAttempts}): ${task.subject}`);
    const lease = new AbortController();
    const beats = this.heartbeat(task, lease);
    let report: () => Promise<void>;
    try {
      const signal = AbortSignal.any ? AbortSignal.any([lease.signal, this.stopping.signal]) : lease.signal;
      const result = await this.handler(task, { client: this.client, signal });
      report = () => this.complete(task, result);
    } catch (e) {
      const final = e instanceof FinalFailure;
      const reason = e instanceof RetryTask || final ? (e as Error).message : `${(e as Error)?.name ?? "Error"}: ${(e as Error)?.message ?? e}`;
      report = () => this.fail(task, reason || "failed", final);
    } finally {
      lease.abort();
      await beats;
    }
    try {
      await report();
    } catch (e) {
      if (e instanceof HuddleError && (e.status === 409 || e.status === 404)) {
        this.stats.lost += 1;
        this.log(`${task.id} is no longer ours (${e.code}): ${e.message}`);
        return;
      }
      if (!(e instanceof HuddleError)) throw e;
      this.log(`${task.id}: could not report the outcome (${e.code}): ${e.message}; releasing it`);
      await this.client.release(task.id, `the worker could not report: ${e.message}`).catch(() => undefined);
      await sleep(backoff(4), this.stopping.signal);
    }
  }

  private async complete(task: Task, result: unknown): Promise<void> {
    await this.client.complete(task.id, result ?? null);
    this.stats.completed += 1;
    this.log(`completed ${task.id}`);
  }

  private async fail(task: Task, reason: string, final: boolean): Promise<void> {
    const after = await this.client.fail(task.id, reason, { final });
    if (after.status === "pending") {
      this.stats.retried += 1;
      this.log(`${task.id} back in the queue (${after.attempts} of ${after.maxAttempts} attempts used): ${reason}`);
    } else {
      this.stats.failed += 1;
      this.log(`failed ${task.id}: ${reason}`);
    }
  }

  /** Renews the lease every third of it until `lease` aborts; aborts it when the task is lost. */
  private async heartbeat(task: Task, lease: AbortController): Promise<void> {
    const leaseMs = this.options.leaseMs ?? (task.leaseExpiresAt ? Date.parse(task.leaseExpiresAt) - Date.now() : 30_000);
    const every = Math.max(leaseMs / 3, 50);
    while (!lease.signal.aborted) {
      await sleep(every, lease.signal);
      if (lease.signal.aborted) return;
      try {
        await this.client.heartbeat(task.id, { leaseMs: this.options.leaseMs });
      } catch (e) {
        if (e instanceof HuddleError && (e.status === 409 || e.status === 404)) {
          this.log(`${task.id}: lease lost (${e.code})`);
          lease.abort();
          return;
        }
        this.log(`${task.id}: heartbeat failed: ${(e as Error).message}`);
      }
    }
  }
}
