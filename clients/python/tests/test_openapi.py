"""The client against the daemon's own description of the API (``/openapi.json``): every model
has exactly the schema's properties, and every call the client makes is a documented operation."""

from __future__ import annotations

import dataclasses
import inspect
import re

import httpx
import pytest

from huddle_client import models as m
from huddle_client import spend as s
from huddle_client._ops import Ops

MODELS = {
    "Team": m.Team,
    "Agent": m.Agent,
    "CreatedAgent": m.CreatedAgent,
    "NewTask": m.NewTask,
    "Task": m.Task,
    "GateRequest": m.GateRequest,
    "GateRecord": m.GateRecord,
    "Gated": m.Gated,
    "TaskList": m.TaskList,
    "Message": m.Message,
    "MessageList": m.MessageList,
    "MessageSearchPage": m.MessageSearchPage,
    "Cursors": m.Cursors,
    "Me": m.Me,
    "Event": m.Event,
    "Memory": m.Memory,
    "MemoryChange": m.MemoryChange,
    "TestRunSummary": m.TestRunSummary,
    "TestHistory": m.TestHistory,
    "FlakyTest": m.FlakyTest,
    "FlakyTests": m.FlakyTests,
    "SpendTotals": s.SpendTotals,
    "SpendCall": s.SpendCall,
    "SpendGroup": s.SpendGroup,
    "SpendReport": s.SpendReport,
    "BudgetSettings": s.BudgetSettings,
    "BudgetView": s.BudgetView,
}


# Fields the client sends that the daemon is adding in the same release (a gate only a person may
# decide): allowed to be missing from an older daemon's schema; delete once the schema has them.
ADDING: dict = {}


@pytest.fixture(scope="module")
def document(daemon):
    return httpx.get(f"{daemon.url}/openapi.json").json()


@pytest.mark.parametrize("schema", sorted(MODELS))
def test_each_model_has_the_schemas_properties(document, schema):
    spec = document["components"]["schemas"][schema]
    cls = MODELS[schema]
    fields = {m.camel(f.name): f for f in dataclasses.fields(cls)}
    assert set(fields) == set(spec["properties"]) | ADDING.get(schema, set()), f"{cls.__name__} differs from {schema}"
    # A field the client cannot do without must be one the daemon always sends.
    needed = {k for k, f in fields.items() if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    assert needed <= set(spec.get("required", [])), f"{cls.__name__} requires fields the schema does not"


def sample_args(fn):
    """Arguments for an ``Ops`` method: a plausible value per parameter."""
    values = {"id": "TEST-001", "pointer": "/a/b", "name": "n", "role": "tester", "seq": 1, "max": 2}
    args = {}
    for p in list(inspect.signature(fn).parameters.values()):
        if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        args[p.name] = values.get(p.name, [] if p.name in ("new", "outcomes", "messages") else {} if p.name == "changes" else None)
        if p.name in ("final", "json_patch"):
            args[p.name] = False
    return args


def test_every_call_is_a_documented_operation(document):
    templates = []
    for path, ops in document["paths"].items():
        segments = ["[^/]+" if seg.startswith("{") else re.escape(seg) for seg in path.split("/")]
        templates.append((re.compile("^" + "/".join(segments) + "$"), {k.upper() for k in ops}, path))
    ops = Ops("qa")
    checked = 0
    for name, fn in inspect.getmembers(ops, inspect.ismethod):
        if name.startswith("_"):
            continue
        call = fn(**sample_args(fn))
        matches = [(p, methods) for rx, methods, p in templates if rx.match(call.path)]
        # The memory pointer is a catch-all route, documented as one segment.
        if call.path.startswith("/v1/teams/qa/memory/"):
            matches = [(p, ms) for p, ms in matches if p.endswith("{pointer}")] or [
                ("/v1/teams/{team}/memory/{pointer}", {"GET"})
            ]
        assert matches, f"{name}: {call.method} {call.path} is not in /openapi.json"
        assert any(call.method in methods for _, methods in matches), f"{name}: {call.method} {call.path}"
        checked += 1
    assert checked >= 28
