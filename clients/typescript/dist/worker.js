import { HuddleError } from "./errors.js";
import { backoff, sleep } from "./transport.js";
/** Throw from a handler to give the task back for another attempt. */
export class RetryTask extends Error {
    constructor(message) {
        super(message);
        this.name = "RetryTask";
    }
}
/** Throw from a handler to fail the task for good. */
export class FinalFailure extends Error {
    constructor(message) {
        super(message);
        this.name = "FinalFailure";
    }
}
export class Worker {
    client;
    handler;
    options;
    stats = { completed: 0, failed: 0, retried: 0, lost: 0 };
    stopping = new AbortController();
    log;
    constructor(client, handler, options = {}) {
        this.client = client;
        this.handler = handler;
        this.options = options;
        this.log = options.log ?? ((line) => console.error(`huddle worker: ${line}`));
    }
    /** Claims nothing more; the task in hand finishes first. */
    stop() {
        this.stopping.abort();
    }
    /** Works until `stop()`; resolves with what it did. */
    async run() {
        this.log(`started in team ${this.client.team}`);
        let away = 0;
        while (!this.stopping.signal.aborted) {
            let task;
            try {
                const { prefixes, project, strictProject, leaseMs } = this.options;
                task = await this.client.claim({ prefixes, project, strictProject, waitMs: this.options.waitMs ?? 5000, leaseMs });
            }
            catch (e) {
                if (!(e instanceof HuddleError) || !e.isRetryable)
                    throw e;
                away += 1;
                this.log(`claim failed (${e.message}); retrying`);
                await sleep(backoff(Math.min(away, 6), e), this.stopping.signal);
                continue;
            }
            away = 0;
            if (task)
                await this.work(task);
        }
        const s = this.stats;
        this.log(`stopped: ${s.completed} completed, ${s.failed} failed, ${s.retried} retried, ${s.lost} lost`);
        return s;
    }
    async work(task) {
        this.log(`claimed ${task.id} (attempt ${task.attempts + 1} of ${task.maxAttempts}): ${task.subject}`);
        const lease = new AbortController();
        const beats = this.heartbeat(task, lease);
        let report;
        try {
            const signal = AbortSignal.any ? AbortSignal.any([lease.signal, this.stopping.signal]) : lease.signal;
            const result = await this.handler(task, { client: this.client, signal });
            report = () => this.complete(task, result);
        }
        catch (e) {
            const final = e instanceof FinalFailure;
            const reason = e instanceof RetryTask || final ? e.message : `${e?.name ?? "Error"}: ${e?.message ?? e}`;
            report = () => this.fail(task, reason || "failed", final);
        }
        finally {
            lease.abort();
            await beats;
        }
        try {
            await report();
        }
        catch (e) {
            if (e instanceof HuddleError && (e.status === 409 || e.status === 404)) {
                this.stats.lost += 1;
                this.log(`${task.id} is no longer ours (${e.code}): ${e.message}`);
                return;
            }
            if (!(e instanceof HuddleError))
                throw e;
            this.log(`${task.id}: could not report the outcome (${e.code}): ${e.message}; releasing it`);
            await this.client.release(task.id, `the worker could not report: ${e.message}`).catch(() => undefined);
            await sleep(backoff(4), this.stopping.signal);
        }
    }
    async complete(task, result) {
        await this.client.complete(task.id, result ?? null);
        this.stats.completed += 1;
        this.log(`completed ${task.id}`);
    }
    async fail(task, reason, final) {
        const after = await this.client.fail(task.id, reason, { final });
        if (after.status === "pending") {
            this.stats.retried += 1;
            this.log(`${task.id} back in the queue (${after.attempts} of ${after.maxAttempts} attempts used): ${reason}`);
        }
        else {
            this.stats.failed += 1;
            this.log(`failed ${task.id}: ${reason}`);
        }
    }
    /** Renews the lease every third of it until `lease` aborts; aborts it when the task is lost. */
    async heartbeat(task, lease) {
        const leaseMs = this.options.leaseMs ?? (task.leaseExpiresAt ? Date.parse(task.leaseExpiresAt) - Date.now() : 30_000);
        const every = Math.max(leaseMs / 3, 50);
        while (!lease.signal.aborted) {
            await sleep(every, lease.signal);
            if (lease.signal.aborted)
                return;
            try {
                await this.client.heartbeat(task.id, { leaseMs: this.options.leaseMs });
            }
            catch (e) {
                if (e instanceof HuddleError && (e.status === 409 || e.status === 404)) {
                    this.log(`${task.id}: lease lost (${e.code})`);
                    lease.abort();
                    return;
                }
                this.log(`${task.id}: heartbeat failed: ${e.message}`);
            }
        }
    }
}
//# sourceMappingURL=worker.js.map