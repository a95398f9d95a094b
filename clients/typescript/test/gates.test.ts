// Human gates against a real daemon: a coordinator holds a task until a person answers or
// decides; approve releases it (the claim shows the decision), reject cancels it, an approval
// answered without a decision is refused.
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

test("an approved gate releases the task and the claim shows the decision", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  await t.coordinator.createTask({ id: "TEST-001", subject: "drop the old table" });
  const gated = await t.coordinator.gateTask("TEST-001", "May the tester drop the old table?", { kind: "approval" });
  assert.equal(gated.question.id, "HUMAN-001");
  assert.equal(gated.question.owner, "human");
  assert.equal(gated.question.status, "pending");
  assert.equal(gated.question.subject, "May the tester drop the old table?");
  assert.equal(gated.task.id, "TEST-001");
  assert.deepEqual(gated.task.blockedBy, ["HUMAN-001"]);
  const waiting = await t.coordinator.listTasks({ owner: "human", status: "pending" });
  assert.deepEqual(waiting.tasks.map((x) => x.id), ["HUMAN-001"]);
  const open = (await t.coordinator.getTask("TEST-001")).gates ?? [];
  assert.deepEqual(open.map((g) => [g.id, g.kind, g.status, g.decision]), [["HUMAN-001", "approval", "open", null]]);

  assert.equal(await tester.claim(), null, "gated: nothing to claim");

  const answered = await t.coordinator.approve("HUMAN-001", "after the backup");
  assert.equal(answered.id, "HUMAN-001");
  assert.equal(answered.status, "completed");
  assert.deepEqual(answered.result, { answer: "after the backup", answeredBy: "coordinator", answeredAs: "coordinator", decision: "approve" });

  const held = await tester.claim();
  assert.equal(held?.id, "TEST-001");
  assert.equal(held?.gates?.length, 1);
  const gate = held!.gates![0];
  assert.deepEqual(
    [gate.id, gate.question, gate.kind, gate.status, gate.decision, gate.answer, gate.answeredBy],
    ["HUMAN-001", "May the tester drop the old table?", "approval", "answered", "approve", "after the backup", "coordinator"],
  );
  assert.ok(gate.answeredAt !== null && gate.answeredAt >= gated.question.createdAt, `answeredAt: ${gate.answeredAt}`);
  const again = await t.coordinator.reject("HUMAN-001", "too late").catch((e) => e);
  assert.ok(again instanceof HuddleError);
  assert.equal(again.status, 409);
});

test("a task created gated is cancelled by a rejection with the reason", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  const created = await t.coordinator.createTask({
    id: "TEST-001",
    subject: "change calc.py",
    gate: { question: "May the tester change calc.py?", kind: "approval" },
  });
  assert.deepEqual(created.blockedBy, ["HUMAN-001"]);
  assert.equal(created.status, "pending");
  assert.equal(await tester.claim(), null, "created gated: no claim gets it first");

  const rejected = await t.coordinator.reject("HUMAN-001", "billing freezes this week");
  assert.deepEqual(rejected.result, { answer: "billing freezes this week", answeredBy: "coordinator", answeredAs: "coordinator", decision: "reject" });

  const task = await t.coordinator.getTask("TEST-001");
  assert.equal(task.status, "cancelled");
  assert.equal(task.failureReason, "billing freezes this week");
  assert.deepEqual(task.gates?.map((g) => [g.decision, g.answer, g.answeredBy]), [["reject", "billing freezes this week", "coordinator"]]);
  assert.equal(await tester.claim(), null, "a rejected task is never claimable");
  const told = await t.coordinator.listMessages({ type: "gate_rejected" });
  assert.deepEqual(told.messages.map((x) => [x.data.task, x.data.question]), [["TEST-001", "HUMAN-001"]]);
});

test("an approval answered without a decision is refused; a question takes words", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  await t.coordinator.createTasks([
    { id: "TEST-001", subject: "migrate", gate: { question: "Tonight?", kind: "approval" } },
    { id: "TEST-002", subject: "clean up", gate: { question: "Which folder?" } },
  ]);
  const refused = await t.coordinator.answer("HUMAN-001", { answer: "yes" }).catch((e) => e);
  assert.ok(refused instanceof HuddleError);
  assert.equal(refused.status, 400);
  assert.equal(refused.code, "invalid_field");
  assert.equal(refused.details.field, "decision");
  assert.match(refused.message, /HUMAN-001/);
  assert.equal((await t.coordinator.getTask("HUMAN-001")).status, "pending", "the refusal changed nothing");

  const answered = await t.coordinator.answer("HUMAN-002", { answer: "tmp/ only" });
  assert.deepEqual(answered.result, { answer: "tmp/ only", answeredBy: "coordinator", answeredAs: "coordinator" });
  const held = await tester.claim();
  assert.equal(held?.id, "TEST-002");
  assert.deepEqual(held?.gates?.map((g) => [g.kind, g.decision, g.answer]), [["question", null, "tmp/ only"]]);
  assert.equal(await tester.claim(), null, "TEST-001 still waits for its decision");
});

test("gateTask sends kind and personOnly only when given", async () => {
  const bodies: unknown[] = [];
  const fake: typeof fetch = async (_url, init) => {
    bodies.push(JSON.parse(String(init?.body)));
    return new Response(JSON.stringify({ question: {}, task: {} }), { status: 201, headers: { "content-type": "application/json" } });
  };
  const client = new HuddleClient({ url: "http://huddle.invalid", token: "x", team: "qa", fetch: fake });
  await client.gateTask("TEST-001", "May it?");
  await client.gateTask("TEST-001", "May it?", { kind: "approval", personOnly: false });
  await client.gateTask("TEST-001", "May it?", { personOnly: true });
  assert.deepEqual(bodies, [{ question: "May it?" }, { question: "May it?", kind: "approval" }, { question: "May it?", personOnly: true }]);
});

test("a holder asks a person and its long poll wakes to the decision", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  await t.coordinator.createTask({ id: "TEST-001", subject: "migrate the schema" });
  const held = await tester.claim();
  assert.equal(held?.id, "TEST-001");
  const asked = await tester.ask("TEST-001", "Drop the legacy table?", { kind: "approval", leaseMs: 5000 });
  const qid = asked.question.id;
  assert.equal(asked.task.status, "in_progress");
  assert.ok(asked.task.blockedBy.includes(qid));
  const open = await tester.decision(qid);
  assert.deepEqual([open.status, open.askedByHolder, open.decision], ["open", "tester", null]);
  await assert.rejects(tester.ask("TEST-001", "And another?"), (e: unknown) => e instanceof HuddleError && e.status === 409);

  const waiting = tester.decision(qid, { waitMs: 30000 });
  await t.coordinator.approve(qid, "Yes, after the backup.");
  const decided = await waiting;
  assert.deepEqual([decided.status, decided.decision, decided.answer], ["answered", "approve", "Yes, after the backup."]);
  const task = await t.coordinator.getTask("TEST-001");
  assert.equal(task.status, "in_progress", "a decision does not release the task");
  assert.equal(task.claimedBy, "tester");
});
