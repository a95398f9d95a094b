"""Human gates against a real daemon: a coordinator holds a task until a person answers or
decides; approve releases it (the claim shows the decision), reject cancels it, an approval
answered without a decision is refused."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

import pytest

from huddle_client import AsyncClient, BadRequest, Conflict, Forbidden, GateRecord, GateRequest, NewTask
from huddle_client._ops import Ops


def test_an_approved_gate_releases_the_task_and_the_claim_shows_the_decision(team):
    tester = team.agent("tester", "tester")
    team.coordinator.create_task({"id": "TEST-001", "subject": "drop the old table"})
    gated = team.coordinator.gate_task("TEST-001", "May the tester drop the old table?", kind="approval")
    assert gated.question.id == "HUMAN-001"
    assert gated.question.owner == "human" and gated.question.status == "pending"
    assert gated.question.subject == "May the tester drop the old table?"
    assert gated.task.id == "TEST-001" and gated.task.blocked_by == ["HUMAN-001"]
    waiting = team.coordinator.list_tasks(owner="human", status="pending")
    assert [t.id for t in waiting.tasks] == ["HUMAN-001"]
    open_gate = team.coordinator.get_task("TEST-001").gates
    assert [(g.id, g.kind, g.status, g.decision) for g in open_gate] == [("HUMAN-001", "approval", "open", None)]

    assert tester.claim() is None, "gated: nothing to claim"

    answered = team.coordinator.approve("HUMAN-001", "after the backup")
    assert answered.id == "HUMAN-001" and answered.status == "completed"
    assert answered.result == {"answer": "after the backup", "answeredBy": "coordinator", "answeredAs": "coordinator", "decision": "approve"}

    held = tester.claim()
    assert held is not None and held.id == "TEST-001"
    assert len(held.gates) == 1
    gate = held.gates[0]
    assert isinstance(gate, GateRecord)
    assert (gate.id, gate.question, gate.kind, gate.status) == (
        "HUMAN-001",
        "May the tester drop the old table?",
        "approval",
        "answered",
    )
    assert (gate.decision, gate.answer, gate.answered_by) == ("approve", "after the backup", "coordinator")
    assert gate.answered_at is not None and gate.answered_at >= gated.question.created_at
    with pytest.raises(Conflict) as again:
        team.coordinator.reject("HUMAN-001", "too late")
    assert again.value.status == 409


def test_a_task_created_gated_is_cancelled_by_a_rejection_with_the_reason(team):
    tester = team.agent("tester", "tester")
    created = team.coordinator.create_task(
        NewTask(
            id="TEST-001",
            subject="change calc.py",
            gate=GateRequest("May the tester change calc.py?", kind="approval"),
        )
    )
    assert created.blocked_by == ["HUMAN-001"] and created.status == "pending"
    assert tester.claim() is None, "created gated: no claim gets it first"

    rejected = team.coordinator.reject("HUMAN-001", "billing freezes this week")
    assert rejected.result["decision"] == "reject"
    assert rejected.result["answer"] == "billing freezes this week"

    task = team.coordinator.get_task("TEST-001")
    assert task.status == "cancelled"
    assert task.failure_reason == "billing freezes this week"
    assert [(g.decision, g.answer, g.answered_by) for g in task.gates] == [
        ("reject", "billing freezes this week", "coordinator")
    ]
    assert tester.claim() is None, "a rejected task is never claimable"
    told = team.coordinator.list_messages(type="gate_rejected")
    assert [(m.data["task"], m.data["question"]) for m in told.messages] == [("TEST-001", "HUMAN-001")]


def test_an_approval_answered_without_a_decision_is_refused_and_a_question_takes_words(team):
    tester = team.agent("tester", "tester")
    team.coordinator.create_tasks(
        [
            {"id": "TEST-001", "subject": "migrate", "gate": {"question": "Tonight?", "kind": "approval"}},
            NewTask(id="TEST-002", subject="clean up", gate=GateRequest("Which folder?")),
        ]
    )
    with pytest.raises(BadRequest) as refused:
        team.coordinator.answer("HUMAN-001", "yes")
    assert refused.value.status == 400
    assert refused.value.code == "invalid_field"
    assert refused.value.details.get("field") == "decision"
    assert "HUMAN-001" in refused.value.message
    assert team.coordinator.get_task("HUMAN-001").status == "pending", "the refusal changed nothing"

    answered = team.coordinator.answer("HUMAN-002", "tmp/ only")
    assert answered.result == {"answer": "tmp/ only", "answeredBy": "coordinator", "answeredAs": "coordinator"}
    held = tester.claim()
    assert held is not None and held.id == "TEST-002"
    assert [(g.kind, g.decision, g.answer) for g in held.gates] == [("question", None, "tmp/ only")]
    assert tester.claim() is None, "TEST-001 still waits for its decision"


def test_person_only_is_sent_only_when_asked_for():
    ops = Ops("qa")
    assert ops.gate_task("TEST-001", "May it?", None, False).json == {"question": "May it?"}
    assert ops.gate_task("TEST-001", "May it?", "approval", False).json == {"question": "May it?", "kind": "approval"}
    assert ops.gate_task("TEST-001", "May it?", None, True).json == {"question": "May it?", "personOnly": True}
    new = NewTask(subject="s", prefix="TEST", gate=GateRequest("May it?", kind="approval"))
    assert Ops("qa").create_task(new).json == {
        "subject": "s",
        "prefix": "TEST",
        "gate": {"question": "May it?", "kind": "approval"},
    }


def test_the_async_client_gates_and_approves(team):
    async def scenario():
        tester_token = team.admin.create_agent("tester", "tester").token
        async with AsyncClient(team.url, team.coordinator.token, team.name) as coord, AsyncClient(
            team.url, tester_token, team.name
        ) as tester:
            await coord.create_task({"id": "TEST-001", "subject": "a"})
            gated = await coord.gate_task("TEST-001", "Go?", kind="approval")
            assert gated.task.blocked_by == [gated.question.id] == ["HUMAN-001"]
            assert await tester.claim() is None
            with pytest.raises(BadRequest):
                await coord.answer("HUMAN-001")
            await coord.approve("HUMAN-001")
            held = await tester.claim()
            assert held is not None and held.id == "TEST-001"
            assert [(g.decision, g.answer) for g in held.gates] == [("approve", None)]

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_person_only_gate_with_a_deadline_is_decided_by_a_lead_only(team):
    lead = team.agent("dana", "lead")
    team.coordinator.create_task({"id": "TEST-001", "subject": "drop the index"})
    tomorrow = (datetime.now(timezone.utc) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    gated = team.coordinator.gate_task(
        "TEST-001", "May the index go?", kind="approval", person_only=True, deadline=tomorrow
    )
    gate = gated.question.metadata["gate"]
    assert (gate["personOnly"], gate["onDeadline"]) == (True, "reject")
    record = team.coordinator.get_task("TEST-001").gates[0]
    assert (record.person_only, record.deadline, record.on_deadline) == (True, tomorrow[:-1] + ".000Z", "reject")

    with pytest.raises(Forbidden) as refused:
        team.coordinator.approve("HUMAN-001")
    assert refused.value.status == 403 and refused.value.code == "person_required"
    answered = lead.approve("HUMAN-001", "after the freeze")
    assert (answered.result["answeredBy"], answered.result["answeredAs"]) == ("dana", "lead")


def test_a_holder_asks_a_person_and_waits_for_the_decision(team):
    tester = team.agent("tester", "tester")
    team.coordinator.create_task({"id": "TEST-001", "subject": "migrate the schema"})
    held = tester.claim()
    assert held is not None and held.id == "TEST-001"
    asked = tester.ask("TEST-001", "Drop the legacy table?", kind="approval", lease_ms=5000)
    qid = asked.question.id
    assert asked.question.owner == "human" and asked.task.status == "in_progress"
    assert qid in asked.task.blocked_by
    opened = tester.decision(qid)
    assert isinstance(opened, GateRecord)
    assert (opened.status, opened.asked_by_holder, opened.decision) == ("open", "tester", None)
    with pytest.raises(Conflict):
        tester.ask("TEST-001", "And another?")

    async def scenario() -> GateRecord:
        async with AsyncClient(team.url, tester.token, team.name) as holder:
            waiting = asyncio.ensure_future(holder.decision(qid, wait_ms=30000))
            await asyncio.sleep(0)  # the poll is under way before the answer goes out
            team.coordinator.reject(qid, "No: archive it.")
            return await waiting

    decided = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert (decided.status, decided.decision, decided.answer) == ("answered", "reject", "No: archive it.")
    task = team.coordinator.get_task("TEST-001")
    assert task.status == "in_progress" and task.claimed_by == "tester", "a decision does not release the task"
