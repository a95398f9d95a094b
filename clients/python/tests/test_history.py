"""Test history: runs posted, the trend, and flaky tests."""

from __future__ import annotations

import asyncio


def test_runs_make_a_trend_and_a_test_that_flips_on_one_tree_is_flaky(team):
    tester = team.agent("tester", "tester")
    for outcome in ("passed", "failed", "passed"):
        tester.post_test_run("calc", "tree-1", [{"nodeid": "t.py::a", "outcome": outcome}, {"nodeid": "t.py::b", "outcome": "passed"}])
    history = team.coordinator.test_history("calc")
    assert [r.pass_rate for r in history.runs] == [100.0, 50.0, 100.0]
    flaky = team.coordinator.flaky_tests("calc", "tree-1")
    assert [(t.nodeid, t.passes, t.failures) for t in flaky.tests] == [("t.py::a", 2, 1)]


def test_one_tiers_trend_flaky_tests_and_regressions_leave_the_other_tiers_out(team):
    tester = team.agent("tester", "tester")
    # unit passes throughout; integration fails then passes on t1 (flaky there), then fails on
    # t2 (a regression).
    for tree, tier, nodeid, outcome in [
        ("t1", "unit", "u::a", "passed"),
        ("t1", "integration", "i::api", "failed"),
        ("t1", "integration", "i::api", "passed"),
        ("t2", "unit", "u::a", "passed"),
        ("t2", "integration", "i::api", "failed"),
    ]:
        tester.post_test_run("calc", tree, [{"nodeid": nodeid, "outcome": outcome}], tier=tier)
    coordinator = team.coordinator
    # Without a tier, only whole-suite runs are read (a tier's run repeats their executions): none here.
    assert len(coordinator.test_history("calc").runs) == 0
    unit = coordinator.test_history("calc", tier="unit")
    assert [r.tier for r in unit.runs] == ["unit", "unit"]
    flaky = coordinator.flaky_tests("calc", "t1", tier="integration")
    assert [t.nodeid for t in flaky.tests] == ["i::api"]
    assert flaky.runs == 2, "only t1's integration runs count"
    assert coordinator.flaky_tests("calc", tier="unit").tests == []
    assert [t["nodeid"] for t in coordinator.regressions("calc", tier="integration")["tests"]] == ["i::api"]
    assert coordinator.regressions("calc", tier="unit")["tests"] == []


def test_the_async_client_reads_one_tiers_history(team):
    from huddle_client import AsyncClient

    tester_token = team.admin.create_agent("tester", "tester").token

    async def scenario():
        async with AsyncClient(team.url, tester_token, team.name) as tester:
            for tier, outcome in [("unit", "passed"), ("e2e", "passed"), ("e2e", "failed")]:
                await tester.post_test_run("web", "t1", [{"nodeid": f"{tier}::a", "outcome": outcome}], tier=tier)
            e2e = await tester.test_history("web", tier="e2e")
            assert [r.tier for r in e2e.runs] == ["e2e", "e2e"]
            flaky = await tester.flaky_tests("web", tier="e2e")
            assert [t.nodeid for t in flaky.tests] == ["e2e::a"]
            regressions = await tester.regressions("web", tier="e2e")
            assert [t["nodeid"] for t in regressions["tests"]] == ["e2e::a"]
            assert (await tester.regressions("web", tier="unit"))["tests"] == []

    asyncio.run(scenario())
