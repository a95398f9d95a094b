"""The Worker helper against a real daemon: completes tasks, keeps a lease alive past its
length with heartbeats, retries or fails for good as the handler says, and stops gracefully."""

from __future__ import annotations

import threading
import time

from huddle_client import FinalFailure, Retry, Worker


def run_in_thread(worker: Worker) -> threading.Thread:
    t = threading.Thread(target=worker.run, daemon=True)
    t.start()
    return t


def wait_closed(client, ids, timeout=60.0):
    """Waits (on a condition, with a deadline) until every task of ``ids`` is closed."""
    deadline = time.monotonic() + timeout
    while True:
        tasks = {i: client.get_task(i) for i in ids}
        if all(t.closed for t in tasks.values()):
            return tasks
        assert time.monotonic() < deadline, f"not closed in time: {tasks}"
        time.sleep(0.05)


def test_the_worker_completes_tasks_with_the_handlers_result_and_stops(team):
    tester = team.agent("tester", "tester")
    team.coordinator.create_tasks([{"id": "TEST-001", "subject": "a"}, {"id": "TEST-002", "subject": "b", "blockedBy": ["TEST-001"]}])
    worker = Worker(tester, lambda task, ctx: {"done": task.id}, wait=0.5)
    thread = run_in_thread(worker)
    tasks = wait_closed(team.coordinator, ["TEST-001", "TEST-002"])
    assert {i: t.result for i, t in tasks.items()} == {"TEST-001": {"done": "TEST-001"}, "TEST-002": {"done": "TEST-002"}}
    worker.stop()
    thread.join(30)
    assert not thread.is_alive(), "stop() ends the loop"
    assert worker.stats.completed == 2


def test_heartbeats_keep_a_task_past_its_lease(team):
    tester = team.agent("tester", "tester")
    team.coordinator.create_task({"id": "TEST-001", "subject": "slow"})
    release = threading.Event()
    seen = []

    def slow(task, ctx):
        # Hold the task until its lease (5 s, beats every third of it: slack for a busy machine)
        # has been renewed past its first expiry.
        first = task.lease_expires_at
        while team.coordinator.get_task(task.id).lease_expires_at <= first:
            time.sleep(0.02)
        seen.append(ctx.lease_lost.is_set())
        release.wait(30)
        return "kept"

    worker = Worker(tester, slow, wait=0.5, lease=5)
    thread = run_in_thread(worker)
    deadline = time.monotonic() + 30
    while not seen:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    release.set()
    done = wait_closed(team.coordinator, ["TEST-001"])["TEST-001"]
    worker.stop()
    thread.join(30)
    assert done.status == "completed" and done.result == "kept"
    assert done.attempts == 0, "no lease expired"
    assert seen == [False]


def test_retry_requeues_the_task_and_final_failure_fails_it_for_good(team):
    tester = team.agent("tester", "tester")
    team.coordinator.create_tasks(
        [{"id": "TEST-001", "subject": "flaky once", "maxAttempts": 3}, {"id": "TEST-002", "subject": "hopeless", "maxAttempts": 3}]
    )
    tries = {"TEST-001": 0}

    def handler(task, ctx):
        if task.id == "TEST-002":
            raise FinalFailure("the environment is broken")
        tries["TEST-001"] += 1
        if tries["TEST-001"] == 1:
            raise Retry("runner crashed")
        return "second time lucky"

    worker = Worker(tester, handler, wait=0.5)
    thread = run_in_thread(worker)
    tasks = wait_closed(team.coordinator, ["TEST-001", "TEST-002"])
    worker.stop()
    thread.join(30)
    assert tasks["TEST-002"].status == "failed"
    assert tasks["TEST-002"].failure_reason == "the environment is broken"
    assert tasks["TEST-001"].status == "completed", "a retryable failure returns the task to the queue"
    assert tasks["TEST-001"].attempts == 1
    assert (worker.stats.completed, worker.stats.retried, worker.stats.failed) == (1, 1, 1)
