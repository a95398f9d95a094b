"""huddle's pytest reporter: loaded with `-p huddle_pytest_report`, writes one JSON file to
$HUDDLE_PYTEST_REPORT at the end of the session. Kept cheap per test: a passing phase costs a
dict lookup and an addition; text is built only for failures; the file is written once.
With $HUDDLE_PYTEST_PROGRESS set it also appends a line as each test starts and ends (and one
per failed collector), flushed at once, so a run stopped at its timeout keeps what finished
and names the test that was running: ["start", nodeid], ["test", row], ["error", nodeid, text].

Shape: {"tests": [[nodeid, outcome, duration, lineno0, longrepr], ...],
         "errors": [[nodeid, longrepr], ...]}
outcome: "passed" | "failed" | "error" | "skipped" (xfailed is skipped, xpassed passed,
a strict xpass failed); lineno0 is pytest's 0-based line; longrepr only on failure.
"""

import json
import os

_OUT = os.environ.get("HUDDLE_PYTEST_REPORT")
_PROGRESS_PATH = os.environ.get("HUDDLE_PYTEST_PROGRESS")
_progress = open(_PROGRESS_PATH, "a", buffering=1, encoding="utf-8") if _PROGRESS_PATH else None
_tests = {}
_errors = []


def _line(*item):
    if _progress is not None:
        _progress.write(json.dumps(item) + "\n")


def pytest_runtest_logstart(nodeid, location):
    _line("start", nodeid)


def pytest_runtest_logfinish(nodeid, location):
    t = _tests.get(nodeid)
    if t is not None:
        _line("test", t)


def pytest_runtest_logreport(report):
    nodeid = report.nodeid
    t = _tests.get(nodeid)
    if t is None:
        loc = report.location
        t = _tests[nodeid] = [nodeid, "passed", 0.0, loc[1] if loc else None, None]
    t[2] += report.duration
    outcome = report.outcome
    if outcome == "passed":
        return
    if outcome == "skipped":
        if t[1] == "passed":
            t[1] = "skipped"
        return
    # failed: in the call it is the test's failure, in setup or teardown an error (a test that
    # already failed stays failed); the texts of every failing phase are kept.
    if report.when == "call":
        t[1] = "failed"
    elif t[1] != "failed":
        t[1] = "error"
    text = report.longreprtext
    t[4] = text if t[4] is None else t[4] + "\n" + text


def pytest_collectreport(report):
    if report.failed:
        _errors.append([report.nodeid, report.longreprtext])
        _line("error", report.nodeid, report.longreprtext)


def pytest_sessionfinish(session):
    if _OUT:
        with open(_OUT, "w", encoding="utf-8") as f:
            json.dump({"tests": list(_tests.values()), "errors": _errors}, f)
