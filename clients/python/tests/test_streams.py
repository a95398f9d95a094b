"""The event and message streams as iterators: typed items in order, and resumption with
Last-Event-ID across a cut network and a daemon restart, with nothing lost or repeated."""

from __future__ import annotations

import pytest
from daemon import ADMIN, Daemon
from proxy import CuttingProxy
from streams_help import take

from huddle_client import Client, Unauthorized


def test_events_carry_typed_tasks_and_messages_in_order(team):
    tester = team.agent("tester", "tester")
    team.coordinator.create_task({"id": "TEST-001", "subject": "a"})
    tester.claim()
    tester.post_message("coordinator", "test_result", "all green", {"passRate": 100.0, "taskId": "TEST-001"})
    tester.complete("TEST-001", {"passRate": 100.0})
    # The two agents' `agent.created` come first.
    events = [e for e in take(team.coordinator.events(), 6) if not e.type.startswith("agent.")]
    assert [e.type for e in events] == ["task.created", "task.claimed", "message.posted", "task.completed"]
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    assert events[2].message.data["passRate"] == 100.0
    assert events[3].task.status == "completed" and events[3].task.closed
    only = take(team.coordinator.events(type="task.completed"), 1)
    assert only[0].task.result == {"passRate": 100.0}


def test_a_cut_connection_resumes_after_the_last_item_seen(team, daemon):
    proxy = CuttingProxy(daemon.port)
    try:
        via_proxy = Client(proxy.url, team.coordinator.token, team.name)
        stream = via_proxy.messages(idle_timeout=5)
        team.coordinator.post_message("*", "note", "m1")
        team.coordinator.post_message("*", "note", "m2")
        first = take(stream, 2)
        proxy.cut()
        team.coordinator.post_message("*", "note", "m3")
        team.coordinator.post_message("*", "note", "m4")
        rest = take(stream, 2)
        assert [m.summary for m in first + rest] == ["m1", "m2", "m3", "m4"]
        assert proxy.accepted >= 2, "the stream reconnected"
    finally:
        proxy.close()


def test_a_stream_follows_the_team_across_a_daemon_restart():
    d = Daemon()
    try:
        admin = Client(d.url, ADMIN)
        admin.create_team("restart")
        coord = Client(d.url, admin.with_team("restart").create_agent("coordinator", "coordinator").token, "restart")
        events = coord.events(type="message.posted")
        coord.post_message("*", "note", "before")
        assert [e.message.summary for e in take(events, 1)] == ["before"]
        d = d.restart()
        coord.post_message("*", "note", "after")
        assert [e.message.summary for e in take(events, 1)] == ["after"]
    finally:
        d.close()


def test_a_refused_stream_raises_at_once(team):
    with pytest.raises(Unauthorized):
        take(Client(team.url, "wrong-token", team.name).events(), 1)
