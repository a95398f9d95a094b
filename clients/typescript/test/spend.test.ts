// The model budget and its ledger against a real daemon: reserve and settle, a refusal once the
// budget is spent, a raise with If-Match that lets calls resume, and the report.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { BUDGET_EXCEEDED, HuddleError } from "../src/index.js";
import { Daemon, team } from "./daemon.js";

let daemon: Daemon;
before(async () => {
  daemon = await Daemon.start();
});
after(async () => {
  await daemon.close();
});

test("a spent budget refuses the next call until a coordinator raises it", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  const set = await t.coordinator.setBudget({ maxTokens: 100, prices: { m1: { promptPerMillion: 1_000_000, completionPerMillion: 3_000_000 } } });
  assert.equal(set.version, 1);
  const call = await tester.reserveSpend("m1", { task: "TEST-001" });
  const settled = await tester.settleSpend(call.id, { promptTokens: 90, completionTokens: 20 });
  assert.deepEqual([settled.settled, settled.costMicros], [true, 90 + 60]);
  const refused = await tester.reserveSpend("m1", { task: "TEST-001" }).catch((e) => e);
  assert.ok(refused instanceof HuddleError);
  assert.equal(refused.status, 409);
  assert.equal(refused.code, BUDGET_EXCEEDED);
  await t.coordinator.createTask({ id: "TEST-001", subject: "a" });
  const claim = await tester.claim({ model: "m1" }).catch((e) => e);
  assert.equal(claim.code, BUDGET_EXCEEDED, "no model-calling task while the budget is spent");
  const stale = await t.coordinator.setBudget({ maxTokens: 500 }, { ifVersion: 0 }).catch((e) => e);
  assert.equal(stale.status, 412);
  const raised = await t.coordinator.setBudget({ maxTokens: 500 }, { ifVersion: 1 });
  assert.deepEqual([raised.version, raised.exhausted, raised.remainingTokens], [2, false, 390]);
  await tester.reserveSpend("m1");
  assert.equal((await tester.claim({ model: "m1" }))?.id, "TEST-001");
  const report = await t.coordinator.spendReport();
  assert.deepEqual([report.total.calls, report.total.tokens], [2, 110]);
  assert.deepEqual(report.byTask.map((g) => [g.key, g.tokens]), [["TEST-001", 110]]);
  assert.equal((await tester.spendReport({ task: "TEST-002" })).total.calls, 0);
  assert.equal((await tester.budget()).spent.costMicros, 150);
});
