"""Every API operation as a plain description of one HTTP request and how to read its answer,
shared by the synchronous :class:`~huddle_client.Client` and the :class:`~huddle_client.AsyncClient`,
so both speak exactly the same protocol."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, Iterable, List, Mapping, Optional, TypeVar, Union
from urllib.parse import quote

from . import models as m
from . import spend as s

T = TypeVar("T")
TaskInput = Union[m.NewTask, Mapping[str, Any]]


@dataclass
class Call(Generic[T]):
    method: str
    path: str
    #: Reads the answer's JSON (``None`` for 204) into the result.
    parse: Callable[[Any], T]
    params: Optional[Dict[str, Any]] = None
    json: Any = None
    content_type: Optional[str] = None
    headers: Dict[str, str] = field(default_factory=dict)
    #: Safe to send again when the connection drops before the answer (a read, or a write made
    #: idempotent by its key).
    retry: bool = False


def seg(value: str) -> str:
    """One path segment, escaped."""
    return quote(str(value), safe="")


def ms(seconds: Optional[float]) -> Optional[int]:
    return None if seconds is None else int(round(seconds * 1000))


def query(**params: Any) -> Dict[str, Any]:
    """Query parameters without the unset ones; booleans as ``true``/``false``."""
    return {
        m.camel(k): (str(v).lower() if isinstance(v, bool) else v) for k, v in params.items() if v is not None
    }


def claim_body(
    prefixes: Optional[List[str]],
    wait: Optional[float],
    lease: Optional[float],
    project: Optional[str],
    strict_project: bool,
    model: Optional[str] = None,
) -> Dict[str, Any]:
    """A claim's JSON body: ``project`` takes only that project's tasks and tasks naming
    none (``strict_project``: only that project's); ``model``, the model the worker calls, makes
    its ``TEST``/``QARUN`` tasks wait while the team's model budget is spent."""
    body = query(prefixes=prefixes, wait_ms=ms(wait), lease_ms=ms(lease), project=project, model=model)
    if strict_project:
        body["strictProject"] = True
    return body


def if_match(version: Optional[int]) -> Dict[str, str]:
    return {} if version is None else {"If-Match": f'"{version}"'}


def task_json(task: TaskInput) -> Dict[str, Any]:
    return m.to_json(task) if isinstance(task, m.NewTask) else dict(task)


def task(data: Any) -> m.Task:
    return m.from_json(m.Task, data)


def tasks(data: Any) -> List[m.Task]:
    return [task(t) for t in data]


def message(data: Any) -> m.Message:
    return m.from_json(m.Message, data)


class Ops:
    """Builds the calls of one team (``team`` may be ``None`` for the admin's team calls)."""

    def __init__(self, team: Optional[str]) -> None:
        self.team = team

    def _t(self, rest: str = "") -> str:
        if not self.team:
            raise ValueError("this call needs a team: pass team= to the client")
        return f"/v1/teams/{seg(self.team)}{rest}"

    # Teams and agents -------------------------------------------------------------------------
    def create_team(self, name: str) -> Call[m.Team]:
        return Call("POST", "/v1/teams", lambda d: m.from_json(m.Team, d), json={"name": name})

    def list_teams(self) -> Call[List[m.Team]]:
        return Call("GET", "/v1/teams", lambda d: [m.from_json(m.Team, t) for t in d["teams"]], retry=True)

    def create_agent(self, name: str, role: str) -> Call[m.CreatedAgent]:
        body = {"name": name, "role": role}
        return Call("POST", self._t("/agents"), lambda d: m.from_json(m.CreatedAgent, d), json=body)

    def list_agents(self) -> Call[List[m.Agent]]:
        return Call("GET", self._t("/agents"), lambda d: [m.from_json(m.Agent, a) for a in d["agents"]], retry=True)

    # Tasks ------------------------------------------------------------------------------------
    def create_task(self, new: TaskInput) -> Call[m.Task]:
        return Call("POST", self._t("/tasks"), task, json=task_json(new))

    def create_tasks(self, new: Iterable[TaskInput]) -> Call[List[m.Task]]:
        return Call("POST", self._t("/tasks"), tasks, json=[task_json(t) for t in new])

    def list_tasks(self, **filters: Any) -> Call[m.TaskList]:
        return Call("GET", self._t("/tasks"), lambda d: m.from_json(m.TaskList, d), params=query(**filters), retry=True)

    def get_task(self, id: str) -> Call[m.Task]:
        return Call("GET", self._t(f"/tasks/{seg(id)}"), task, retry=True)

    def update_task(self, id: str, changes: Mapping[str, Any], version: Optional[int]) -> Call[m.Task]:
        body = {m.camel(k): v for k, v in changes.items()}
        return Call("PATCH", self._t(f"/tasks/{seg(id)}"), task, json=body, headers=if_match(version))

    def claim(
        self,
        prefixes: Optional[List[str]],
        wait: Optional[float],
        lease: Optional[float],
        project: Optional[str] = None,
        strict_project: bool = False,
        model: Optional[str] = None,
    ) -> Call[Optional[m.Task]]:
        body = claim_body(prefixes, wait, lease, project, strict_project, model)
        return Call("POST", self._t("/tasks/claim"), lambda d: None if d is None else task(d), json=body)

    def claim_many(
        self,
        max: int,
        prefixes: Optional[List[str]],
        wait: Optional[float],
        lease: Optional[float],
        project: Optional[str] = None,
        strict_project: bool = False,
        model: Optional[str] = None,
    ) -> Call[List[m.Task]]:
        body = {"max": max, **claim_body(prefixes, wait, lease, project, strict_project, model)}
        return Call("POST", self._t("/tasks/claim"), lambda d: [] if d is None else tasks(d["tasks"]), json=body)

    def heartbeat(self, id: str, lease: Optional[float]) -> Call[m.Task]:
        body = query(lease_ms=ms(lease))
        return Call("POST", self._t(f"/tasks/{seg(id)}/heartbeat"), task, json=body, retry=True)

    def complete(self, id: str, result: Any) -> Call[m.Task]:
        body = {} if result is None else {"result": result}
        return Call("POST", self._t(f"/tasks/{seg(id)}/complete"), task, json=body)

    def fail(self, id: str, reason: str, final: bool) -> Call[m.Task]:
        # `final` is sent only when true: without it the daemon retries while attempts remain.
        body: Dict[str, Any] = {"reason": reason, "final": True} if final else {"reason": reason}
        return Call("POST", self._t(f"/tasks/{seg(id)}/fail"), task, json=body)

    def release(self, id: str, note: Optional[str]) -> Call[m.Task]:
        body = {} if note is None else {"note": note}
        return Call("POST", self._t(f"/tasks/{seg(id)}/release"), task, json=body)

    # Human gates ------------------------------------------------------------------------------
    def gate_task(
        self,
        id: str,
        question: str,
        kind: Optional[str],
        person_only: bool,
        deadline: Optional[str] = None,
        on_deadline: Optional[str] = None,
    ) -> Call[m.Gated]:
        # `personOnly` is sent only when true, like `final`: absent, any coordinator may decide.
        gate = m.GateRequest(question, kind, True if person_only else None, deadline, on_deadline)
        body = m.to_json(gate)
        return Call("POST", self._t(f"/tasks/{seg(id)}/gate"), lambda d: m.from_json(m.Gated, d), json=body)

    def answer(self, id: str, answer: Optional[str], decision: Optional[str]) -> Call[m.Task]:
        # Not retried: a second answer to the same question is refused (409).
        body = query(answer=answer, decision=decision)
        return Call("POST", self._t(f"/tasks/{seg(id)}/answer"), task, json=body)

    def ask(
        self,
        id: str,
        question: str,
        kind: Optional[str],
        person_only: bool,
        deadline: Optional[str],
        on_deadline: Optional[str],
        lease_ms: Optional[int],
    ) -> Call[m.Gated]:
        # Not retried: a second question while one is open is refused (409).
        body = m.to_json(m.GateRequest(question, kind, True if person_only else None, deadline, on_deadline))
        if lease_ms is not None:
            body["leaseMs"] = lease_ms
        return Call("POST", self._t(f"/tasks/{seg(id)}/ask"), lambda d: m.from_json(m.Gated, d), json=body)

    def decision(self, id: str, wait_ms: Optional[int]) -> Call[m.GateRecord]:
        params = query(wait_ms=wait_ms or None)
        return Call(
            "GET",
            self._t(f"/tasks/{seg(id)}/decision"),
            lambda d: m.from_json(m.GateRecord, d),
            params=params,
            retry=True,
        )

    # Messages ---------------------------------------------------------------------------------
    def post_message(
        self, to: str, type: str, summary: str, data: Optional[Mapping[str, Any]], key: Optional[str]
    ) -> Call[m.Message]:
        body = {"to": to, "type": type, "summary": summary, "data": dict(data or {})}
        # A key made here, once, so a retried post is stored once.
        headers = {"Idempotency-Key": key or str(uuid.uuid4())}
        return Call("POST", self._t("/messages"), message, json=body, headers=headers, retry=True)

    def list_messages(self, **filters: Any) -> Call[m.MessageList]:
        return Call(
            "GET", self._t("/messages"), lambda d: m.from_json(m.MessageList, d), params=query(**filters), retry=True
        )

    def search_messages(self, **filters: Any) -> Call[m.MessageSearchPage]:
        return Call(
            "GET",
            self._t("/messages/search"),
            lambda d: m.from_json(m.MessageSearchPage, d),
            params=query(**filters),
            retry=True,
        )

    def post_messages(self, messages: Iterable[Mapping[str, Any]]) -> Call[List[m.Message]]:
        # Each message gets its own key, made here once, so a retried batch is stored once.
        batch = [
            {
                "to": x["to"],
                "type": x["type"],
                "summary": x["summary"],
                "data": dict(x.get("data") or {}),
                "idempotencyKey": x.get("idempotency_key") or str(uuid.uuid4()),
            }
            for x in messages
        ]
        return Call(
            "POST",
            self._t("/messages/batch"),
            lambda d: [message(x) for x in d["messages"]],
            json={"messages": batch},
            retry=True,
        )

    def cursors(self) -> Call[m.Cursors]:
        return Call("GET", self._t("/cursors"), lambda d: m.from_json(m.Cursors, d), retry=True)

    def me(self) -> Call[m.Me]:
        return Call("GET", self._t("/me"), lambda d: m.from_json(m.Me, d), retry=True)

    def task_events(self, id: str, limit: Optional[int]) -> Call[List[m.Event]]:
        return Call(
            "GET",
            self._t(f"/tasks/{seg(id)}/events"),
            lambda d: [m.from_json(m.Event, x) for x in d["events"]],
            params=query(limit=limit),
            retry=True,
        )

    def inbox(self, wait: Optional[float], limit: Optional[int]) -> Call[List[m.Message]]:
        params = query(wait_ms=ms(wait), limit=limit)
        return Call("GET", self._t("/inbox"), lambda d: [message(x) for x in d["messages"]], params=params, retry=True)

    def ack(self, seq: int) -> Call[None]:
        return Call("POST", self._t("/inbox/ack"), lambda d: None, json={"seq": seq}, retry=True)

    # Shared memory ----------------------------------------------------------------------------
    def get_memory(self) -> Call[m.Memory]:
        return Call("GET", self._t("/memory"), lambda d: m.from_json(m.Memory, d), retry=True)

    def get_memory_at(self, pointer: str) -> Call[Any]:
        if not pointer.startswith("/"):
            raise ValueError(f"a JSON Pointer starts with '/': {pointer!r}")
        path = "/".join(seg(p) for p in pointer[1:].split("/"))
        return Call("GET", self._t(f"/memory/{path}"), lambda d: d, retry=True)

    def patch_memory(self, patch: Any, version: Optional[int], json_patch: bool) -> Call[m.Memory]:
        kind = "application/json-patch+json" if json_patch else "application/merge-patch+json"
        return Call(
            "PATCH",
            self._t("/memory"),
            lambda d: m.from_json(m.Memory, d),
            json=patch,
            content_type=kind,
            headers=if_match(version),
        )

    def replace_memory(self, doc: Any, version: Optional[int]) -> Call[m.Memory]:
        return Call(
            "PUT", self._t("/memory"), lambda d: m.from_json(m.Memory, d), json={"doc": doc}, headers=if_match(version)
        )

    def memory_history(self, limit: Optional[int]) -> Call[List[m.MemoryChange]]:
        return Call(
            "GET",
            self._t("/memory-history"),
            lambda d: [m.from_json(m.MemoryChange, c) for c in d["changes"]],
            params=query(limit=limit),
            retry=True,
        )

    # Test history -----------------------------------------------------------------------------
    def post_test_run(
        self, project: str, tree: str, outcomes: Iterable[Mapping[str, str]], tier: Optional[str]
    ) -> Call[Any]:
        body: Dict[str, Any] = {"project": project, "tree": tree, "outcomes": [dict(o) for o in outcomes]}
        if tier is not None:
            body["tier"] = tier
        return Call("POST", self._t("/history/runs"), lambda d: d, json=body)

    def test_history(self, project: Optional[str], tier: Optional[str]) -> Call[m.TestHistory]:
        return Call(
            "GET",
            self._t("/history"),
            lambda d: m.from_json(m.TestHistory, d),
            params=query(project=project, tier=tier),
            retry=True,
        )

    def flaky_tests(self, project: Optional[str], tree: Optional[str], tier: Optional[str]) -> Call[m.FlakyTests]:
        return Call(
            "GET",
            self._t("/history/flaky"),
            lambda d: m.from_json(m.FlakyTests, d),
            params=query(project=project, tree=tree, tier=tier),
            retry=True,
        )

    def regressions(self, project: Optional[str], tier: Optional[str]) -> Call[Any]:
        return Call(
            "GET", self._t("/history/regressions"), lambda d: d, params=query(project=project, tier=tier), retry=True
        )

    # --- the model budget and its ledger ---

    def budget(self) -> Call[s.BudgetView]:
        return Call("GET", self._t("/budget"), lambda d: m.from_json(s.BudgetView, d), retry=True)

    def set_budget(self, budget: Any, if_match: Optional[int]) -> Call[s.BudgetView]:
        body = m.to_json(budget) if isinstance(budget, s.BudgetSettings) else dict(budget or {})
        headers = {} if if_match is None else {"If-Match": f'"{if_match}"'}
        return Call("PUT", self._t("/budget"), lambda d: m.from_json(s.BudgetView, d), json=body, headers=headers)

    def reserve_spend(self, model: str, task: Optional[str]) -> Call[s.SpendCall]:
        body = query(model=model, task=task)
        return Call("POST", self._t("/spend/reserve"), lambda d: m.from_json(s.SpendCall, d), json=body)

    def settle_spend(self, id: Any, prompt_tokens: Optional[int], completion_tokens: Optional[int]) -> Call[s.SpendCall]:
        body = {"promptTokens": prompt_tokens or 0, "completionTokens": completion_tokens or 0}
        return Call("POST", self._t(f"/spend/{seg(id)}/settle"), lambda d: m.from_json(s.SpendCall, d), json=body)

    def spend_report(self, task: Optional[str]) -> Call[s.SpendReport]:
        return Call("GET", self._t("/spend"), lambda d: m.from_json(s.SpendReport, d), params=query(task=task), retry=True)
