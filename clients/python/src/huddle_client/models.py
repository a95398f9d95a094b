"""The API's data as typed dataclasses, written to match the daemon's OpenAPI document
(``/openapi.json``; ``tests/test_openapi.py`` checks every field against a live daemon).

Python names are snake_case; the wire names are the API's camelCase (``blocked_by`` is
``blockedBy``). Fields the daemon adds later are ignored when reading, so a newer daemon does
not break an older client.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Type, TypeVar, Union

T = TypeVar("T")

#: A task's statuses; ``CLOSED`` ones never change again.
PENDING, IN_PROGRESS, COMPLETED, FAILED, CANCELLED = (
    "pending",
    "in_progress",
    "completed",
    "failed",
    "cancelled",
)
CLOSED = frozenset({COMPLETED, FAILED, CANCELLED})

#: A gate's kinds: a ``QUESTION`` is released by any answer, an ``APPROVAL`` needs a decision.
QUESTION, APPROVAL = "question", "approval"
#: A person's decisions on a gate: ``APPROVE`` releases the task, ``REJECT`` cancels it.
APPROVE, REJECT = "approve", "reject"


def camel(name: str) -> str:
    """``blocked_by`` → ``blockedBy``; a trailing ``_`` (``from_``, ``type_``) is dropped."""
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(p.title() for p in rest)


def from_json(cls: Type[T], data: Dict[str, Any]) -> T:
    """Builds ``cls`` from the wire JSON, reading each field by its camelCase name."""
    nested: Dict[str, Any] = getattr(cls, "_nested", {})
    values = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        key = camel(f.name)
        if key not in data:
            continue
        value = data[key]
        inner = nested.get(f.name)
        if inner is not None and value is not None:
            value = [from_json(inner, v) for v in value] if isinstance(value, list) else from_json(inner, value)
        values[f.name] = value
    return cls(**values)


def to_json(obj: Any) -> Dict[str, Any]:
    """The wire JSON of an input dataclass, leaving out fields that are ``None``; a field that
    is itself an input dataclass (``NewTask.gate``) becomes its wire JSON too."""
    values = ((camel(f.name), getattr(obj, f.name)) for f in dataclasses.fields(obj))
    return {k: to_json(v) if dataclasses.is_dataclass(v) else v for k, v in values if v is not None}


@dataclass
class Team:
    name: str
    created_at: str


@dataclass
class Agent:
    name: str
    role: str
    #: When the agent last made a request; ``None`` if it never did.
    last_seen_at: Optional[str] = None


@dataclass
class CreatedAgent:
    name: str
    role: str
    #: The agent's bearer token, shown once.
    token: str


@dataclass
class GateRequest:
    """A person's question before a task (``gate_task``, and ``gate`` of a :class:`NewTask`):
    ``kind`` ``question`` (the default: any answer releases the task) or ``approval`` (approve
    releases it, reject cancels it); ``person_only``: only a person's token (role ``lead``) may
    decide it; ``deadline`` (RFC 3339): when ``on_deadline`` (``reject``, the default, or
    ``approve``) is taken if no one decided. Unset fields are not sent."""

    question: str
    kind: Optional[str] = None
    person_only: Optional[bool] = None
    deadline: Optional[str] = None
    on_deadline: Optional[str] = None


@dataclass
class GateRecord:
    """One gate that held a task and what the person decided (``Task.gates``, on a claim and a
    task read): ``status`` ``open``, ``answered`` or ``withdrawn``; ``decision`` ``approve``,
    ``reject`` or ``None`` (open, or a question answered without one)."""

    id: str
    question: str
    kind: str
    status: str
    person_only: bool = False
    deadline: Optional[str] = None
    on_deadline: Optional[str] = None
    #: The holder that asked it mid-task (:meth:`~huddle_client.Client.ask`); ``None`` for a
    #: gate asked before the task was claimed.
    asked_by_holder: Optional[str] = None
    decision: Optional[str] = None
    answer: Optional[str] = None
    answered_by: Optional[str] = None
    answered_at: Optional[str] = None


@dataclass
class NewTask:
    """A task to create: give ``id`` (``TEST-007``) or only ``prefix`` (``TEST``)."""

    subject: str
    id: Optional[str] = None
    prefix: Optional[str] = None
    description: Optional[str] = None
    active_form: Optional[str] = None
    owner: Optional[str] = None
    blocked_by: Optional[List[str]] = None
    metadata: Optional[Dict[str, Any]] = None
    max_attempts: Optional[int] = None
    #: Ask a person first (a :class:`GateRequest`, or ``{"question": …, "kind": …}``): the task
    #: is created with this question among its blockers, in the same transaction.
    gate: Optional[Union[GateRequest, Dict[str, Any]]] = None


@dataclass
class Task:
    id: str
    subject: str
    status: str
    version: int
    created_at: str
    updated_at: str
    description: str = ""
    active_form: Optional[str] = None
    owner: Optional[str] = None
    claimed_by: Optional[str] = None
    lease_expires_at: Optional[str] = None
    attempts: int = 0
    max_attempts: int = 0
    blocked_by: List[str] = field(default_factory=list)
    blocks: List[str] = field(default_factory=list)
    metadata: Dict[str, Any] = field(default_factory=dict)
    result: Optional[Any] = None
    failure_reason: Optional[str] = None
    #: The gates that held it and what was decided; on a claim and a task read (empty
    #: elsewhere, and when it was never gated).
    gates: List[GateRecord] = field(default_factory=list)
    #: The attempt's W3C trace context, in a claim's answer only: send it back as the
    #: ``traceparent`` header to join the attempt's trace (docs/telemetry.md).
    traceparent: Optional[str] = None
    _nested = {"gates": GateRecord}

    @property
    def closed(self) -> bool:
        """Completed, failed or cancelled: it will not change again."""
        return self.status in CLOSED


@dataclass
class Gated:
    """A gate asked: the question (``HUMAN-NNN``, owned by ``human``) and the task it holds,
    now blocked by it."""

    question: Task
    task: Task
    _nested = {"question": Task, "task": Task}


@dataclass
class TaskList:
    tasks: List[Task]
    #: The ``after`` of the next page; ``None`` on the last.
    next: Optional[str] = None
    _nested = {"tasks": Task}


@dataclass
class Message:
    seq: int
    id: str
    from_: str
    to: str
    type: str
    summary: str
    created_at: str
    data: Dict[str, Any] = field(default_factory=dict)


@dataclass
class MessageList:
    messages: List[Message]
    #: The ``after`` of the next page; ``None`` on the last.
    next: Optional[int] = None
    _nested = {"messages": Message}


@dataclass
class MessageSearchPage:
    """A page of a message search, newest first: ``total`` counts every match (not only this
    page); ``next`` is the ``before`` of the following page, ``None`` on the last."""

    messages: List[Message]
    total: int
    next: Optional[int] = None
    _nested = {"messages": Message}


@dataclass
class Cursors:
    """The newest event and message ``seq``: read them, then a snapshot, then follow the
    streams after them (nothing missed, nothing replayed from the start)."""

    events: int
    messages: int


@dataclass
class Me:
    """The token's own agent: its name and role, and how the team's workers ask a person
    mid-task (``questions``: ``maxWaitMinutes`` in force, ``askBelowGate`` when set)."""

    name: str
    role: str
    questions: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Event:
    """One change in the team: ``task.created``, ``task.claimed``, ``task.completed``,
    ``task.failed``, ``task.released``, ``task.expired``, ``task.updated``,
    ``message.posted`` or ``memory.updated``."""

    seq: int
    type: str
    created_at: str
    data: Any = None

    @property
    def task(self) -> Optional[Task]:
        """The task as it is after a ``task.*`` event."""
        return from_json(Task, self.data) if self.type.startswith("task.") else None

    @property
    def message(self) -> Optional[Message]:
        """The message of a ``message.posted`` event."""
        return from_json(Message, self.data) if self.type == "message.posted" else None


@dataclass
class Memory:
    version: int
    doc: Any


@dataclass
class MemoryChange:
    version: int
    agent: str
    kind: str
    patch: Any
    created_at: str


@dataclass
class TestRunSummary:
    __test__ = False  # not a pytest test class
    id: int
    project: str
    tree: str
    agent: str
    started_at: str
    passed: int
    failed: int
    skipped: int
    errors: int
    pass_rate: float
    tier: Optional[str] = None
    # The task the run verified, when it was posted for one.
    task: Optional[str] = None
    # The files the run kept: {"runDir": ..., "files": [{"path", "kind", "bytes", "removed"}]}.
    artifacts: Optional[Dict[str, Any]] = None


@dataclass
class TestHistory:
    __test__ = False
    runs: List[TestRunSummary]
    projects: List[str] = field(default_factory=list)
    project: Optional[str] = None
    pass_rate_change: Optional[float] = None
    _nested = {"runs": TestRunSummary}


@dataclass
class FlakyTest:
    nodeid: str
    passes: int
    failures: int
    trees: int
    score: float


@dataclass
class FlakyTests:
    runs: int
    tests: List[FlakyTest]
    project: Optional[str] = None
    tree: Optional[str] = None
    # Flaky tests left off the end because the answer reached the daemon's page budget.
    omitted: int = 0
    _nested = {"tests": FlakyTest}
