"""The AsyncWorker against a real daemon: completes tasks, keeps a lease alive past its length
with heartbeats running beside the handler, retries or fails for good as the handler says,
stops gracefully (from the loop or another thread), and waits out a daemon that is away."""

from __future__ import annotations

import asyncio
import logging
import socket
import time

from proxy import CuttingProxy

from huddle_client import AsyncClient, AsyncWorker, FinalFailure, Retry


def run(scenario, timeout: float = 90.0):
    return asyncio.run(asyncio.wait_for(scenario, timeout))


async def until(condition, what: str, timeout: float = 30.0) -> None:
    """Waits (on a condition, with a deadline) until ``condition()`` holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not in time: {what}"
        await asyncio.sleep(0.02)


async def wait_closed(client: AsyncClient, ids, timeout: float = 60.0):
    """Waits (on a condition, with a deadline) until every task of ``ids`` is closed."""
    deadline = time.monotonic() + timeout
    while True:
        tasks = {i: await client.get_task(i) for i in ids}
        if all(t.closed for t in tasks.values()):
            return tasks
        assert time.monotonic() < deadline, f"not closed in time: {tasks}"
        await asyncio.sleep(0.05)


def clients(team, token: str):
    return AsyncClient(team.url, token, team.name), AsyncClient(team.url, team.coordinator.token, team.name)


def test_the_async_worker_completes_tasks_with_the_handlers_result_and_stops(team):
    token = team.admin.create_agent("tester", "tester").token
    team.coordinator.create_tasks([{"id": "TEST-001", "subject": "a"}, {"id": "TEST-002", "subject": "b", "blockedBy": ["TEST-001"]}])

    async def handler(task, ctx):
        await asyncio.sleep(0)
        return {"done": task.id}

    async def scenario():
        tester, coord = clients(team, token)
        async with tester, coord:
            worker = AsyncWorker(tester, handler, wait=0.5)
            running = asyncio.ensure_future(worker.run())
            tasks = await wait_closed(coord, ["TEST-001", "TEST-002"])
            assert {i: t.result for i, t in tasks.items()} == {"TEST-001": {"done": "TEST-001"}, "TEST-002": {"done": "TEST-002"}}
            worker.stop()
            stats = await asyncio.wait_for(running, 30)
            assert stats is worker.stats
            assert (stats.completed, stats.failed, stats.retried, stats.lost) == (2, 0, 0, 0)

    run(scenario())


def test_heartbeats_keep_a_task_past_its_lease(team):
    token = team.admin.create_agent("tester", "tester").token
    team.coordinator.create_task({"id": "TEST-001", "subject": "slow"})
    # Heartbeats go out every third of the lease: 5 s leaves a beat over 3 s to land on a busy
    # machine (at 1.5 s, one beat held up by a second under a loaded CI run lost the task).
    lease = 5.0
    seen = []

    async def scenario():
        tester, coord = clients(team, token)
        async with tester, coord:

            async def slow(task, ctx):
                # Hold the task past one and a half leases, and until a heartbeat (a concurrent
                # asyncio task, beating while this handler awaits) renewed it past its first expiry.
                first, started = task.lease_expires_at, time.monotonic()
                while (await coord.get_task(task.id)).lease_expires_at <= first or time.monotonic() - started < 1.5 * lease:
                    assert time.monotonic() - started < 30, "the lease was never renewed"
                    await asyncio.sleep(0.05)
                seen.append(ctx.lease_lost.is_set())
                return "kept"

            worker = AsyncWorker(tester, slow, wait=0.5, lease=lease)
            running = asyncio.ensure_future(worker.run())
            done = (await wait_closed(coord, ["TEST-001"]))["TEST-001"]
            worker.stop()
            stats = await asyncio.wait_for(running, 30)
            assert done.status == "completed" and done.result == "kept"
            assert done.attempts == 0, "no lease expired"
            assert seen == [False]
            assert (stats.completed, stats.lost) == (1, 0)

    run(scenario())


def test_retry_requeues_the_task_and_final_failure_fails_it_for_good(team):
    token = team.admin.create_agent("tester", "tester").token
    team.coordinator.create_tasks(
        [{"id": "TEST-001", "subject": "flaky once", "maxAttempts": 3}, {"id": "TEST-002", "subject": "hopeless", "maxAttempts": 3}]
    )
    attempts_seen = []

    async def handler(task, ctx):
        if task.id == "TEST-002":
            raise FinalFailure("the environment is broken")
        attempts_seen.append(task.attempts)
        if len(attempts_seen) == 1:
            raise Retry("runner crashed")
        return "second time lucky"

    async def scenario():
        tester, coord = clients(team, token)
        async with tester, coord:
            worker = AsyncWorker(tester, handler, wait=0.5)
            running = asyncio.ensure_future(worker.run())
            tasks = await wait_closed(coord, ["TEST-001", "TEST-002"])
            worker.stop()
            stats = await asyncio.wait_for(running, 30)
            assert tasks["TEST-002"].status == "failed"
            assert tasks["TEST-002"].failure_reason == "the environment is broken"
            assert tasks["TEST-002"].attempts == 1, "failed for good on its first attempt"
            assert tasks["TEST-001"].status == "completed", "a retryable failure returns the task to the queue"
            assert tasks["TEST-001"].result == "second time lucky"
            assert tasks["TEST-001"].attempts == 1
            assert attempts_seen == [0, 1], "the retry was counted before the second claim"
            assert (stats.completed, stats.retried, stats.failed) == (1, 1, 1)

    run(scenario())


def test_any_other_handler_error_is_retryable_until_attempts_run_out(team):
    token = team.admin.create_agent("tester", "tester").token
    team.coordinator.create_task({"id": "TEST-001", "subject": "always breaks", "maxAttempts": 2})

    async def handler(task, ctx):
        raise ValueError("boom")

    async def scenario():
        tester, coord = clients(team, token)
        async with tester, coord:
            worker = AsyncWorker(tester, handler, wait=0.5)
            running = asyncio.ensure_future(worker.run())
            task = (await wait_closed(coord, ["TEST-001"]))["TEST-001"]
            worker.stop()
            stats = await asyncio.wait_for(running, 30)
            assert task.status == "failed" and task.attempts == 2
            assert task.failure_reason == "ValueError: boom"
            assert (stats.retried, stats.failed) == (1, 1)

    run(scenario())


def test_stop_from_another_thread_lets_the_current_task_finish(team):
    token = team.admin.create_agent("tester", "tester").token
    team.coordinator.create_tasks([{"id": "TEST-001", "subject": "a"}, {"id": "TEST-002", "subject": "b"}])
    handled = []

    async def scenario():
        started = asyncio.Event()
        tester, coord = clients(team, token)
        async with tester, coord:

            async def handler(task, ctx):
                handled.append(task.id)
                started.set()
                # Finish only once the stop has been asked for: the worker must wait for us.
                await asyncio.wait_for(ctx.stopping.wait(), 30)
                return "finished"

            worker = AsyncWorker(tester, handler, wait=0.5)
            running = asyncio.ensure_future(worker.run())
            await asyncio.wait_for(started.wait(), 30)
            await asyncio.get_running_loop().run_in_executor(None, worker.stop)
            stats = await asyncio.wait_for(running, 30)
            assert len(handled) == 1, "nothing more is claimed after stop()"
            [mine] = handled
            [other] = {"TEST-001", "TEST-002"} - {mine}
            finished, left = await coord.get_task(mine), await coord.get_task(other)
            assert finished.status == "completed" and finished.result == "finished"
            assert left.status == "pending" and left.owner is None
            assert stats.completed == 1

    run(scenario())


def test_cancelling_the_worker_mid_task_gives_the_task_back(team):
    token = team.admin.create_agent("tester", "tester").token
    team.coordinator.create_task({"id": "TEST-001", "subject": "a", "maxAttempts": 3})

    async def scenario():
        started = asyncio.Event()
        tester, coord = clients(team, token)
        async with tester, coord:

            async def handler(task, ctx):
                started.set()
                await asyncio.Event().wait()  # until cancelled

            running = asyncio.ensure_future(AsyncWorker(tester, handler, wait=0.5, lease=30).run())
            await asyncio.wait_for(started.wait(), 30)
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            assert running.cancelled()
            task = await coord.get_task("TEST-001")
            assert task.status == "pending" and task.owner is None, "released, not held until the lease runs out"
            assert task.attempts == 0, "a release uses no attempt"

    run(scenario())


def test_the_worker_backs_off_while_the_daemon_is_away_and_carries_on_when_it_is_back(team, daemon, caplog):
    caplog.set_level(logging.WARNING, logger="huddle_client.aio_worker")
    token = team.admin.create_agent("tester", "tester").token
    team.coordinator.create_task({"id": "TEST-001", "subject": "a"})
    # A port nobody listens on (yet): claims are refused until the proxy opens it.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def claim_failures() -> int:
        return sum("claim failed" in r.getMessage() for r in caplog.records)

    async def scenario():
        proxy = None
        tester = AsyncClient(f"http://127.0.0.1:{port}", token, team.name, retries=0)
        coord = AsyncClient(team.url, team.coordinator.token, team.name)
        async with tester, coord:
            worker = AsyncWorker(tester, lambda task, ctx: _value("done"), wait=0.5)
            running = asyncio.ensure_future(worker.run())
            try:
                await until(lambda: claim_failures() >= 2, "two refused claims")
                assert not running.done(), "an unreachable daemon does not end the loop"
                proxy = CuttingProxy(daemon.port, port)
                task = (await wait_closed(coord, ["TEST-001"]))["TEST-001"]
                assert task.status == "completed" and task.result == "done"
            finally:
                worker.stop()
                stats = await asyncio.wait_for(running, 30)
                if proxy is not None:
                    proxy.close()
            assert stats.completed == 1

    run(scenario())


async def _value(value):
    return value
