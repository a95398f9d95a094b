"""Message search and paging over the whole history, batched posts, the streams' cursors, a
task's events and the token's own identity, against a real daemon (sync and async clients)."""

from __future__ import annotations

import asyncio

import pytest

from huddle_client import AsyncClient, BadRequest


def test_search_pages_every_match_newest_first_with_an_exact_total(team):
    tester = team.agent("tester", "tester")
    posted = tester.post_messages(
        {
            "to": "coordinator",
            "type": "fix_required" if n % 3 == 0 else "test_result",
            "summary": f"run {n}: average failed on TEST-{n % 4:03d}",
            "data": {"taskId": f"TEST-{n % 4:03d}", "n": n},
        }
        for n in range(30)
    )
    assert [m.seq for m in posted] == list(range(posted[0].seq, posted[0].seq + 30)), "consecutive seqs"
    assert all(m.from_ == "tester" for m in posted)

    seen, before = [], None
    while True:
        page = team.coordinator.search_messages(type="fix_required", limit=4, before=before)
        assert page.total == 10
        seen += [m.data["n"] for m in page.messages]
        if page.next is None:
            break
        before = page.next
    assert seen == list(range(27, -1, -3)), "every fix_required once, newest first"

    words = team.coordinator.search_messages("average TEST-002", from_="tester")
    assert words.total == len([n for n in range(30) if n % 4 == 2]) and {m.data["taskId"] for m in words.messages} == {"TEST-002"}
    task = team.coordinator.search_messages(task="TEST-001", type="test_result")
    assert task.total == len([n for n in range(30) if n % 4 == 1 and n % 3 != 0])
    with pytest.raises(BadRequest):
        team.coordinator.search_messages(limit=0)


def test_cursors_me_and_a_tasks_events(team):
    before = team.coordinator.cursors()
    team.coordinator.create_task({"id": "TEST-001", "subject": "a"})
    team.coordinator.update_task("TEST-001", subject="a, edited")
    team.coordinator.post_message("*", "note", "hello")
    after = team.coordinator.cursors()
    assert after.events > before.events and after.messages == before.messages + 1
    events = team.coordinator.task_events("TEST-001")
    assert [e.type for e in events] == ["task.updated", "task.created"]
    assert events[0].task.subject == "a, edited"
    assert [e.type for e in team.coordinator.task_events("TEST-001", limit=1)] == ["task.updated"]
    me = team.agent("watcher", "observer").me()
    assert (me.name, me.role) == ("watcher", "observer")


def test_the_async_client_searches_and_posts_in_batches(team):
    token = team.admin.create_agent("async-lead", "coordinator").token

    async def run():
        async with AsyncClient(team.url, token, team.name) as c:
            await c.post_messages([{"to": "*", "type": "note", "summary": f"async {n}"} for n in range(5)])
            page = await c.search_messages("async", limit=2)
            assert page.total == 5 and [m.summary for m in page.messages] == ["async 4", "async 3"]
            assert (await c.me()).role == "coordinator"
            assert (await c.cursors()).messages >= 5

    asyncio.run(run())
