"""Test history: runs posted, the trend, and flaky tests."""

from __future__ import annotations


def test_runs_make_a_trend_and_a_test_that_flips_on_one_tree_is_flaky(team):
    tester = team.agent("tester", "tester")
    for outcome in ("passed", "failed", "passed"):
        tester.post_test_run("calc", "tree-1", [{"nodeid": "t.py::a", "outcome": outcome}, {"nodeid": "t.py::b", "outcome": "passed"}])
    history = team.coordinator.test_history("calc")
    assert [r.pass_rate for r in history.runs] == [100.0, 50.0, 100.0]
    flaky = team.coordinator.flaky_tests("calc", "tree-1")
    assert [(t.nodeid, t.passes, t.failures) for t in flaky.tests] == [("t.py::a", 2, 1)]
