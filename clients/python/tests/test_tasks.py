"""Tasks against a real daemon: create (one, many, with dependencies), list and filter, get,
update with If-Match, claim (long poll), heartbeat, release, complete, fail."""

from __future__ import annotations

import threading

import pytest

from huddle_client import BadRequest, Conflict, NewTask, NotFound, StaleVersion, Unauthorized, Client


def test_a_batch_with_dependencies_is_created_and_only_unblocked_tasks_are_ready(team):
    created = team.coordinator.create_tasks(
        [
            NewTask(id="TEST-001", subject="unit tests", active_form="Testing"),
            {"prefix": "TEST", "subject": "e2e", "blockedBy": ["TEST-001"]},
        ]
    )
    assert [t.id for t in created] == ["TEST-001", "TEST-002"]
    assert created[1].blocked_by == ["TEST-001"]
    assert created[0].active_form == "Testing"
    assert created[0].status == "pending"
    ready = team.coordinator.list_tasks(ready=True)
    assert [t.id for t in ready.tasks] == ["TEST-001"]
    assert team.coordinator.get_task("TEST-001").blocks == ["TEST-002"]


def test_list_pages_through_every_task_with_next(team):
    team.coordinator.create_tasks([{"prefix": "TEST", "subject": f"t{i}"} for i in range(5)])
    seen, after = [], None
    while True:
        page = team.coordinator.list_tasks(prefix="TEST", limit=2, after=after)
        seen += [t.id for t in page.tasks]
        if page.next is None:
            break
        after = page.next
    assert seen == [f"TEST-00{i}" for i in range(1, 6)]


def test_an_update_with_a_stale_version_is_refused_with_the_current_one(team):
    t = team.coordinator.create_task({"id": "TEST-001", "subject": "a"})
    moved = team.coordinator.update_task("TEST-001", if_version=t.version, subject="b", metadata={"k": 1})
    assert moved.subject == "b" and moved.metadata == {"k": 1} and moved.version > t.version
    with pytest.raises(StaleVersion) as refused:
        team.coordinator.update_task("TEST-001", if_version=t.version, subject="c")
    assert refused.value.status == 412
    assert refused.value.code == "stale_version"
    assert refused.value.details["currentVersion"] == moved.version


def test_a_cycle_is_refused_naming_it(team):
    team.coordinator.create_tasks([{"id": "TEST-001", "subject": "a"}, {"id": "TEST-002", "subject": "b", "blockedBy": ["TEST-001"]}])
    with pytest.raises(Conflict) as refused:
        team.coordinator.update_task("TEST-001", add_blocked_by=["TEST-002"])
    assert refused.value.code == "dependency_cycle"
    assert "TEST-001" in refused.value.details["cycle"]
    assert "409" not in str(refused.value), "the message does not repeat the status"


def test_errors_are_typed_with_their_code_and_details(team):
    with pytest.raises(NotFound) as missing:
        team.coordinator.get_task("TEST-404")
    assert missing.value.code == "not_found"
    with pytest.raises(BadRequest) as bad:
        team.coordinator.create_task({"id": "lower-1", "subject": "x"})
    assert bad.value.details.get("field") == "id"
    with pytest.raises(Unauthorized):
        Client(team.url, "not-a-token", team.name).list_tasks()


def test_a_waiting_claim_gets_a_task_created_while_it_waits(team):
    tester = team.agent("tester", "tester")
    got = []
    waiting = threading.Thread(target=lambda: got.append(tester.claim(wait=20)))
    waiting.start()
    team.coordinator.create_task({"id": "TEST-001", "subject": "late"})
    waiting.join(30)
    assert got and got[0] is not None and got[0].id == "TEST-001"
    assert got[0].claimed_by == "tester" and got[0].status == "in_progress"
    assert tester.claim() is None, "nothing else to claim"


def test_a_claim_for_a_project_takes_only_its_tasks_and_those_naming_none(team):
    tester = team.agent("tester", "tester")
    team.coordinator.create_tasks(
        [
            {"id": "TEST-001", "subject": "shop", "metadata": {"project": "shop"}},
            {"id": "TEST-002", "subject": "any"},
            {"id": "TEST-003", "subject": "calc", "metadata": {"project": "calc"}},
        ]
    )
    assert [t.id for t in tester.claim_many(5, project="calc", strict_project=True)] == ["TEST-003"]
    assert tester.claim(project="calc").id == "TEST-002"
    assert tester.claim(project="calc") is None
    assert team.coordinator.get_task("TEST-001").status == "pending"
    with pytest.raises(BadRequest):
        tester.claim(project="")


def test_heartbeat_extends_the_lease_and_release_gives_the_task_back_unused(team):
    tester = team.agent("tester", "tester")
    team.coordinator.create_task({"id": "TEST-001", "subject": "a"})
    held = tester.claim(lease=5)
    beat = tester.heartbeat("TEST-001", lease=60)
    assert beat.lease_expires_at > held.lease_expires_at
    back = tester.release("TEST-001")
    assert back.status == "pending" and back.claimed_by is None
    again = tester.claim()
    assert again.id == "TEST-001"
    done = tester.complete("TEST-001", {"passRate": 100.0})
    assert done.status == "completed" and done.result == {"passRate": 100.0}
    with pytest.raises(Conflict) as closed:
        tester.complete("TEST-001")
    assert closed.value.code in ("task_closed", "not_holder")


def test_fail_with_attempts_left_requeues_and_final_fails_for_good(team):
    tester = team.agent("tester", "tester")
    team.coordinator.create_tasks(
        [{"id": "FLAKY-001", "subject": "flaky", "maxAttempts": 3}, {"id": "BROKEN-001", "subject": "broken", "maxAttempts": 3}]
    )
    assert tester.claim(["FLAKY"]).id == "FLAKY-001"
    retried = tester.fail("FLAKY-001", "runner crashed")
    assert retried.status == "pending", "attempts remain: back in the queue"
    assert retried.attempts == 1
    assert tester.claim(["BROKEN"]).id == "BROKEN-001"
    final = tester.fail("BROKEN-001", "the project cannot build", final=True)
    assert final.status == "failed"
    assert final.failure_reason == "the project cannot build"
