// The Worker against a real daemon: completes tasks, heartbeats keep a task past its lease,
// retryable versus final failures, graceful stop.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { CLOSED, FinalFailure, RetryTask, Worker, type Task } from "../src/index.js";
import { Daemon, eventually, team } from "./daemon.js";

let daemon: Daemon;
before(async () => {
  daemon = await Daemon.start();
});
after(async () => {
  await daemon.close();
});

const quiet = () => undefined;

test("the worker completes tasks with the handler's result and stops", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  await t.coordinator.createTasks([{ id: "TEST-001", subject: "a" }, { id: "TEST-002", subject: "b", blockedBy: ["TEST-001"] }]);
  const worker = new Worker(tester, (task) => ({ done: task.id }), { waitMs: 500, log: quiet });
  const running = worker.run();
  try {
    await eventually("both closed", async () => (await t.coordinator.getTask("TEST-002")).status === "completed");
  } finally {
    worker.stop();
  }
  const stats = await running;
  assert.equal(stats.completed, 2);
  assert.deepEqual((await t.coordinator.getTask("TEST-001")).result, { done: "TEST-001" });
});

test("heartbeats keep a task past its lease", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  await t.coordinator.createTask({ id: "TEST-001", subject: "slow" });
  let lost: boolean | undefined;
  const worker = new Worker(
    tester,
    async (task, ctx) => {
      const first = task.leaseExpiresAt!;
      await eventually("the lease renewed", async () => (await t.coordinator.getTask(task.id)).leaseExpiresAt! > first);
      lost = ctx.signal.aborted;
      return "kept";
    },
    // Beats go out every third of the lease: 5 s leaves slack for a busy machine.
    { waitMs: 500, leaseMs: 5000, log: quiet },
  );
  const running = worker.run();
  try {
    await eventually("closed", async () => CLOSED.has((await t.coordinator.getTask("TEST-001")).status));
  } finally {
    worker.stop();
  }
  await running;
  const done = await t.coordinator.getTask("TEST-001");
  assert.equal(done.status, "completed");
  assert.equal(done.result, "kept");
  assert.equal(done.attempts, 0, "no lease expired");
  assert.equal(lost, false);
});

test("RetryTask requeues the task and FinalFailure fails it for good", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  await t.coordinator.createTasks([
    { id: "TEST-001", subject: "flaky once", maxAttempts: 3 },
    { id: "TEST-002", subject: "hopeless", maxAttempts: 3 },
  ]);
  let tries = 0;
  const worker = new Worker(
    tester,
    (task: Task) => {
      if (task.id === "TEST-002") throw new FinalFailure("the environment is broken");
      tries += 1;
      if (tries === 1) throw new RetryTask("runner crashed");
      return "second time lucky";
    },
    { waitMs: 500, log: quiet },
  );
  const running = worker.run();
  const closed = async (id: string) => CLOSED.has((await t.coordinator.getTask(id)).status);
  try {
    await eventually("both closed", async () => (await closed("TEST-001")) && (await closed("TEST-002")));
  } finally {
    worker.stop();
  }
  const stats = await running;
  const [a, b] = [await t.coordinator.getTask("TEST-001"), await t.coordinator.getTask("TEST-002")];
  assert.equal(b.status, "failed");
  assert.equal(b.failureReason, "the environment is broken");
  assert.equal(a.status, "completed", "a retryable failure returns the task to the queue");
  assert.equal(a.attempts, 1);
  assert.deepEqual([stats.completed, stats.retried, stats.failed], [1, 1, 1]);
});
