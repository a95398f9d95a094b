// Event and message streams: typed items in order, resumption with Last-Event-ID across a cut
// network and a daemon restart, nothing lost or repeated; refusals throw at once.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { eventMessage, eventTask, HuddleClient, HuddleError } from "../src/index.js";
import { ADMIN, Daemon, take, team } from "./daemon.js";
import { CuttingProxy } from "./proxy.js";

let daemon: Daemon;
before(async () => {
  daemon = await Daemon.start();
});
after(async () => {
  await daemon.close();
});

test("events carry tasks and messages in order", async () => {
  const t = await team(daemon);
  const tester = await t.agent("tester", "tester");
  await t.coordinator.createTask({ id: "TEST-001", subject: "a" });
  await tester.claim();
  await tester.postMessage({ to: "coordinator", type: "test_result", summary: "green", data: { passRate: 100 } });
  await tester.complete("TEST-001", { passRate: 100 });
  const stream = t.coordinator.events();
  const events = (await take(stream, 6)).filter((e) => !e.type.startsWith("agent."));
  await stream.return();
  assert.deepEqual(events.map((e) => e.type), ["task.created", "task.claimed", "message.posted", "task.completed"]);
  assert.equal(eventMessage(events[2])?.data.passRate, 100);
  assert.equal(eventTask(events[3])?.status, "completed");
});

test("a cut connection resumes after the last item seen", async () => {
  const t = await team(daemon);
  const proxy = await CuttingProxy.start(daemon.port);
  try {
    const viaProxy = new HuddleClient({ url: proxy.url, token: t.coordinator.token, team: t.name });
    const stream = viaProxy.messages({ idleTimeoutMs: 5000 });
    await t.coordinator.postMessage({ to: "*", type: "note", summary: "m1" });
    await t.coordinator.postMessage({ to: "*", type: "note", summary: "m2" });
    const first = await take(stream, 2);
    proxy.cut();
    await t.coordinator.postMessage({ to: "*", type: "note", summary: "m3" });
    await t.coordinator.postMessage({ to: "*", type: "note", summary: "m4" });
    const rest = await take(stream, 2);
    await stream.return();
    assert.deepEqual([...first, ...rest].map((m) => m.summary), ["m1", "m2", "m3", "m4"]);
    assert.ok(proxy.accepted >= 2, "the stream reconnected");
  } finally {
    await proxy.close();
  }
});

test("a stream follows the team across a daemon restart", async () => {
  const d = await Daemon.start();
  try {
    const admin = new HuddleClient({ url: d.url, token: ADMIN });
    await admin.createTeam("restart");
    const coord = new HuddleClient({ url: d.url, token: (await admin.withTeam("restart").createAgent("coordinator", "coordinator")).token, team: "restart" });
    const stream = coord.events({ type: "message.posted" });
    await coord.postMessage({ to: "*", type: "note", summary: "before" });
    assert.deepEqual((await take(stream, 1)).map((e) => eventMessage(e)?.summary), ["before"]);
    await d.restart();
    await coord.postMessage({ to: "*", type: "note", summary: "after" });
    assert.deepEqual((await take(stream, 1)).map((e) => eventMessage(e)?.summary), ["after"]);
    await stream.return();
  } finally {
    await d.close();
  }
});

test("a refused stream throws at once", async () => {
  const t = await team(daemon);
  const stream = new HuddleClient({ url: t.url, token: "wrong", team: t.name }).events();
  const refused = await stream.next().catch((e) => e);
  assert.ok(refused instanceof HuddleError);
  assert.equal(refused.status, 401);
});
