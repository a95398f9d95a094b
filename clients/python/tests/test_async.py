"""The asyncio client: the same operations, awaited, and the streams as async iterators."""

from __future__ import annotations

import asyncio

import pytest

from huddle_client import AsyncClient, Conflict


def test_the_async_client_runs_a_task_through_and_streams_its_events(team):
    async def scenario():
        tester_token = team.admin.create_agent("tester", "tester").token
        async with AsyncClient(team.url, team.coordinator.token, team.name) as coord, AsyncClient(
            team.url, tester_token, team.name
        ) as tester:
            claimed = asyncio.ensure_future(tester.claim(wait=20))
            await coord.create_tasks([{"id": "TEST-001", "subject": "a"}, {"id": "QARUN-001", "subject": "b", "blockedBy": ["TEST-001"]}])
            task = await claimed
            assert task is not None and task.id == "TEST-001"
            await tester.heartbeat(task.id)
            posted = await tester.post_message("coordinator", "test_result", "green", {"passRate": 100.0}, idempotency_key="r1")
            again = await tester.post_message("coordinator", "test_result", "green", {"passRate": 100.0}, idempotency_key="r1")
            assert again.seq == posted.seq
            await tester.complete(task.id, {"passRate": 100.0})
            with pytest.raises(Conflict):
                await tester.complete(task.id)
            ready = await coord.list_tasks(ready=True)
            assert [t.id for t in ready.tasks] == ["QARUN-001"]
            seen = []
            async for event in coord.events(type="task."):
                seen.append((event.type, event.task.id))
                if event.type == "task.completed":
                    break
            assert seen == [("task.created", "TEST-001"), ("task.created", "QARUN-001"), ("task.claimed", "TEST-001"), ("task.completed", "TEST-001")]
            messages = [m.summary async for m in _first(coord.messages(type="test_result"), 1)]
            assert messages == ["green"]
            memory = await coord.merge_memory({"execution_results": {"L1": {"passRate": 100.0}}})
            assert await coord.memory_at("/execution_results/L1/passRate") == 100.0
            assert memory.version >= 1

    asyncio.run(asyncio.wait_for(scenario(), 60))


async def _first(items, n):
    async for item in items:
        yield item
        n -= 1
        if n == 0:
            return
