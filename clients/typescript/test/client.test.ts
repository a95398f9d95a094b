// Tasks, messages, memory and errors against a real daemon.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { HuddleClient, HuddleError } from "../src/index.js";
import { Daemon, team } from "./daemon.js";

let daemon: Daemon;
before(async () => {
  daemon = await Daemon.start();
});
after(async () => {
  await daemon.close();
});

test("a batch with dependencies is created and only unblocked tasks are ready", async () => {
  const t = await team(daemon);
  const created = await t.coordinator.createTasks([
    { id: "TEST-001", subject: "unit", activeForm: "Testing" },
    { prefix: "TEST", subject: "e2e", blockedBy: ["TEST-001"] },
  ]);
  assert.deepEqual(created.map((x) => x.id), ["TEST-001", "TEST-002"]);
  const ready = await t.coordinator.listTasks({ ready: true });
  assert.deepEqual(ready.tasks.map((x) => x.id), ["TEST-001"]);
  assert.deepEqual((await t.coordinator.getTask("TEST-001")).blocks, ["TEST-002"]);
  const page = await t.coordinator.listTasks({ limit: 1 });
  assert.equal(page.next, "TEST-001");
  assert.deepEqual((await t.coordinator.listTasks({ after: page.next! })).tasks.map((x) => x.id), ["TEST-002"]);
});

test("errors carry status, code and details, and the message does not repeat the status", async () => {
  const t = await team(daemon);
  const task = await t.coordinator.createTask({ id: "TEST-001", subject: "a" });
  const moved = await t.coordinator.updateTask("TEST-001", { subject: "b" }, { ifVersion: task.version });
  const stale = await t.coordinator.updateTask("TEST-001", { subject: "c" }, { ifVersion: task.version }).catch((e) => e);
  assert.ok(stale instanceof HuddleError);
  assert.equal(stale.status, 412);
  assert.equal(stale.code, "stale_version");
  assert.equal(stale.details.currentVersion, moved.version);
  assert.ok(!stale.message.includes("412"));
  await t.coordinator.createTask({ id: "TEST-002", subject: "b", blockedBy: ["TEST-001"] });
  const cycle = await t.coordinator.updateTask("TEST-001", { addBlockedBy: ["TEST-002"] }).catch((e) => e);
  assert.equal(cycle.code, "dependency_cycle");
  assert.ok((cycle.details.cycle as string[]).includes("TEST-001"));
  const missing = await t.coordinator.getTask("TEST-404").catch((e) => e);
  assert.equal(missing.status, 404);
  const unauthorized = await new HuddleClient({ url: t.url, token: "nope", team: t.name }).listTasks().catch((e) => e);
  assert.equal(unauthorized.status, 401);
  const away = await new HuddleClient({ url: "http://127.0.0.1:1", token: "x", team: "t", retries: 0 }).listTasks().catch((e) => e);
  assert.ok(away instanceof HuddleError && away.isTransport);
});

test("a waiting claim gets a task created while it waits; heartbeat, release, complete", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  const waiting = tester.claim({ waitMs: 20_000 });
  await t.coordinator.createTask({ id: "TEST-001", subject: "late" });
  const held = await waiting;
  assert.equal(held?.id, "TEST-001");
  assert.equal(held?.claimedBy, "tester");
  const beat = await tester.heartbeat("TEST-001", { leaseMs: 60_000 });
  assert.ok(beat.leaseExpiresAt! > held!.leaseExpiresAt!);
  const back = await tester.release("TEST-001", "not now");
  assert.equal(back.status, "pending");
  assert.equal((await tester.claim())?.id, "TEST-001");
  const done = await tester.complete("TEST-001", { passRate: 100 });
  assert.deepEqual(done.result, { passRate: 100 });
  assert.equal(await tester.claim(), null);
});

test("a claim for a project takes only its tasks and those naming none", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  await t.coordinator.createTasks([
    { id: "TEST-001", subject: "shop", metadata: { project: "shop" } },
    { id: "TEST-002", subject: "any" },
    { id: "TEST-003", subject: "calc", metadata: { project: "calc" } },
  ]);
  const strict = await tester.claimMany(5, { project: "calc", strictProject: true });
  assert.deepEqual(strict.map((x) => x.id), ["TEST-003"]);
  assert.equal((await tester.claim({ project: "calc" }))?.id, "TEST-002");
  assert.equal(await tester.claim({ project: "calc" }), null);
  assert.equal((await t.coordinator.getTask("TEST-001")).status, "pending");
});

test("fail with attempts left requeues; final fails for good", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  await t.coordinator.createTasks([
    { id: "FLAKY-001", subject: "flaky", maxAttempts: 3 },
    { id: "BROKEN-001", subject: "broken", maxAttempts: 3 },
  ]);
  assert.equal((await tester.claim({ prefixes: ["FLAKY"] }))?.id, "FLAKY-001");
  const retried = await tester.fail("FLAKY-001", "runner crashed");
  assert.equal(retried.status, "pending", "attempts remain: back in the queue");
  assert.equal((await tester.claim({ prefixes: ["BROKEN"] }))?.id, "BROKEN-001");
  const final = await tester.fail("BROKEN-001", "cannot build", { final: true });
  assert.equal(final.status, "failed");
  assert.equal(final.failureReason, "cannot build");
});

test("messages: idempotent posts, filtered pages, inbox and ack", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  const first = await tester.postMessage({ to: "coordinator", type: "test_result", summary: "r1", data: { passRate: 90 } }, { idempotencyKey: "k1" });
  const again = await tester.postMessage({ to: "coordinator", type: "test_result", summary: "r1", data: { passRate: 90 } }, { idempotencyKey: "k1" });
  assert.equal(again.seq, first.seq);
  await tester.postMessage({ to: "coordinator", type: "note", summary: "n" });
  const results = await t.coordinator.listMessages({ from: "tester", type: "test_result" });
  assert.deepEqual(results.messages.map((m) => m.summary), ["r1"]);
  const inbox = await t.coordinator.inbox({ waitMs: 1000 });
  assert.deepEqual(inbox.map((m) => m.summary), ["r1", "n"]);
  await t.coordinator.ack(inbox[1].seq);
  assert.deepEqual(await t.coordinator.inbox(), []);
});

test("memory: merge patch, JSON Patch, pointers, If-Match, history", async () => {
  const t = await team(daemon);
  const c = t.coordinator;
  const v1 = await c.mergeMemory({ test_strategy: { framework: "pytest", layers: ["L1"] } });
  const v2 = await c.patchMemory([{ op: "add", path: "/test_strategy/layers/-", value: "L2" }], { ifVersion: v1.version });
  assert.deepEqual((v2.doc as { test_strategy: { layers: string[] } }).test_strategy.layers, ["L1", "L2"]);
  assert.equal(await c.memoryAt("/test_strategy/layers/1"), "L2");
  const stale = await c.mergeMemory({ x: 1 }, { ifVersion: v1.version }).catch((e) => e);
  assert.equal(stale.status, 412);
  const replaced = await c.replaceMemory({ a: 1 });
  assert.deepEqual(replaced.doc, { a: 1 });
  assert.equal((await c.memoryHistory()).length, 3);
});

test("test history: runs, trend and flaky tests", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  for (const outcome of ["passed", "failed", "passed"] as const) {
    await tester.postTestRun({ project: "calc", tree: "tree-1", outcomes: [{ nodeid: "t.py::a", outcome }] });
  }
  const history = await t.coordinator.testHistory("calc");
  assert.deepEqual(history.runs.map((r) => r.passRate), [100, 0, 100]);
  const flaky = await t.coordinator.flakyTests({ project: "calc", tree: "tree-1" });
  assert.deepEqual(flaky.tests.map((f) => [f.nodeid, f.passes, f.failures]), [["t.py::a", 2, 1]]);
});

test("one test tier's trend, flaky tests and regressions leave the other tiers out", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  // unit passes throughout; integration fails then passes on t1 (flaky there), then fails on
  // t2 (a regression).
  const runs = [
    ["t1", "unit", "u::a", "passed"],
    ["t1", "integration", "i::api", "failed"],
    ["t1", "integration", "i::api", "passed"],
    ["t2", "unit", "u::a", "passed"],
    ["t2", "integration", "i::api", "failed"],
  ] as const;
  for (const [tree, tier, nodeid, outcome] of runs) {
    await tester.postTestRun({ project: "calc", tree, tier, outcomes: [{ nodeid, outcome }] });
  }
  const c = t.coordinator;
  // Without a tier, only whole-suite runs are read (a tier's run repeats their executions): none here.
  assert.equal((await c.testHistory("calc")).runs.length, 0);
  const unit = await c.testHistory("calc", { tier: "unit" });
  assert.deepEqual(unit.runs.map((r) => r.tier), ["unit", "unit"]);
  const flaky = await c.flakyTests({ project: "calc", tree: "t1", tier: "integration" });
  assert.deepEqual(flaky.tests.map((f) => f.nodeid), ["i::api"]);
  assert.equal(flaky.runs, 2, "only t1's integration runs count");
  assert.deepEqual((await c.flakyTests({ project: "calc", tier: "unit" })).tests, []);
  const regressions = (await c.regressions("calc", { tier: "integration" })) as { tests: { nodeid: string }[] };
  assert.deepEqual(regressions.tests.map((r) => r.nodeid), ["i::api"]);
  const none = (await c.regressions("calc", { tier: "unit" })) as { tests: unknown[] };
  assert.deepEqual(none.tests, []);
});

test("search reaches every message, newest first, with exact totals; batched posts; cursors, me, a task's events", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  const posted = await tester.postMessages(
    Array.from({ length: 30 }, (_, n) => ({
      to: "coordinator",
      type: n % 3 === 0 ? "fix_required" : "test_result",
      summary: `run ${n}: average failed on TEST-00${n % 4}`,
      data: { taskId: `TEST-00${n % 4}`, n },
    })),
  );
  assert.deepEqual(posted.map((x) => x.seq - posted[0].seq), Array.from({ length: 30 }, (_, i) => i));
  const seen: number[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await t.coordinator.searchMessages({ type: "fix_required", limit: 4, before });
    assert.equal(page.total, 10);
    seen.push(...page.messages.map((x) => x.data.n as number));
    if (page.next === null) break;
    before = page.next;
  }
  assert.deepEqual(seen, [27, 24, 21, 18, 15, 12, 9, 6, 3, 0]);
  const words = await t.coordinator.searchMessages({ q: "average TEST-002", from: "tester" });
  assert.equal(words.total, 7);
  const bad = await t.coordinator.searchMessages({ limit: 0 }).catch((e) => e);
  assert.equal(bad.status, 400);

  const cursors = await t.coordinator.cursors();
  assert.equal(cursors.messages, posted.at(-1)!.seq);
  await t.coordinator.createTask({ id: "TEST-001", subject: "a" });
  await t.coordinator.updateTask("TEST-001", { subject: "b" });
  const events = await t.coordinator.taskEvents("TEST-001");
  assert.deepEqual(events.map((e) => e.type), ["task.updated", "task.created"]);
  assert.equal((await t.coordinator.taskEvents("TEST-001", { limit: 1 })).length, 1);
  assert.deepEqual(await tester.me(), { name: "tester", role: "tester", questions: { maxWaitMinutes: 1440 } });
});
