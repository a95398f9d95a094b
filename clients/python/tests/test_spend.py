"""The model budget and its ledger: reserve, settle, a refusal once the budget is spent, a raise
with If-Match, and the report — synchronous and asyncio."""

from __future__ import annotations

import asyncio

import pytest

from huddle_client import BUDGET_EXCEEDED, AsyncClient, BudgetSettings
from huddle_client.errors import Conflict, StaleVersion


def test_a_spent_budget_refuses_the_next_call_until_it_is_raised(team):
    tester = team.agent("tester", "tester")
    view = team.coordinator.set_budget(
        BudgetSettings(max_tokens=100, prices={"m1": {"promptPerMillion": 1_000_000, "completionPerMillion": 2_000_000}})
    )
    assert view.version == 1 and view.remaining_tokens == 100
    call = tester.reserve_spend("m1", "TEST-001")
    settled = tester.settle_spend(call.id, 80, 30)
    assert (settled.settled, settled.cost_micros) == (True, 80 + 60)
    with pytest.raises(Conflict) as refused:
        tester.reserve_spend("m1", "TEST-001")
    assert refused.value.code == BUDGET_EXCEEDED
    assert refused.value.details["spent"] == 110
    # While it is spent, a claim declaring a model takes no TEST task; one declaring none does.
    team.coordinator.create_task({"id": "TEST-001", "subject": "a"})
    with pytest.raises(Conflict) as claim:
        tester.claim(model="m1")
    assert claim.value.code == BUDGET_EXCEEDED
    with pytest.raises(StaleVersion):
        team.coordinator.set_budget({"maxTokens": 500}, if_match=0)
    raised = team.coordinator.set_budget({"maxTokens": 500}, if_match=1)
    assert (raised.version, raised.exhausted, raised.spent.tokens) == (2, False, 110)
    assert tester.reserve_spend("m1").settled is False
    assert tester.claim(model="m1").id == "TEST-001"
    report = team.coordinator.spend_report()
    assert (report.total.calls, report.total.tokens) == (2, 110)
    assert [(g.key, g.tokens) for g in report.by_task] == [("TEST-001", 110)]
    assert report.by_agent[0].key == "tester"
    assert team.coordinator.spend_report(task="TEST-002").total.calls == 0


def test_the_asyncio_client_reserves_and_settles_alike(team):
    created = team.admin.create_agent("async-tester", "tester")

    async def run() -> None:
        async with AsyncClient(team.url, created.token, team.name) as client:
            call = await client.reserve_spend("m1", "TEST-003")
            await client.settle_spend(call.id, 5, 6)
            budget = await client.budget()
            assert (budget.version, budget.spent.tokens, budget.exhausted) == (0, 11, False)
            report = await client.spend_report(task="TEST-003")
            assert report.total.completion_tokens == 6

    asyncio.run(run())
