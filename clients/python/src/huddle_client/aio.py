"""The asyncio client: the same methods as :class:`~huddle_client.Client`, awaited."""

from __future__ import annotations

import asyncio
from typing import Any, Iterable, AsyncIterator, List, Mapping, Optional, TypeVar

import httpx

from . import models as m
from ._ops import Call, Ops, TaskInput
from ._transport import backoff, read, request_args, should_retry, timeouts, transport_error
from .errors import HuddleError
from .spend import AsyncSpendMethods
from .streams import StreamOptions, _Stream, afollow

T = TypeVar("T")


class AsyncClient(AsyncSpendMethods):
    """An asyncio client acting as one agent (its bearer token) in one team; see
    :class:`~huddle_client.Client` for the behaviour, which is the same.

    ``Client("http://127.0.0.1:7700", token, team="qa")``; or :meth:`from_env`, which reads
    ``HUDDLE_URL``, ``HUDDLE_TOKEN`` and ``HUDDLE_TEAM`` like the ``huddle`` CLI. Calls that are
    safe to repeat (reads, heartbeats, message posts with their idempotency key) are retried
    ``retries`` times when the connection drops or the daemon answers 429/503.
    """

    def __init__(
        self, url: str, token: str, team: Optional[str] = None, *, timeout: float = 30.0, retries: int = 3
    ) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.team = team
        self.timeout = timeout
        self.retries = retries
        self._ops = Ops(team)
        self._http = httpx.AsyncClient(base_url=self.url)

    @classmethod
    def from_env(cls, **kwargs: Any) -> "AsyncClient":
        """A client from ``HUDDLE_URL`` (default ``http://127.0.0.1:7700``), ``HUDDLE_TOKEN`` and
        ``HUDDLE_TEAM``."""
        from ._env import from_env

        url, token, team = from_env()
        return cls(url, token, team, **kwargs)

    def with_team(self, team: str) -> "AsyncClient":
        """The same agent (token) in another team, on a connection pool of its own."""
        return AsyncClient(self.url, self.token, team, timeout=self.timeout, retries=self.retries)

    def with_token(self, token: str) -> "AsyncClient":
        """Another agent, same team."""
        return AsyncClient(self.url, token, self.team, timeout=self.timeout, retries=self.retries)

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _run(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            try:
                try:
                    response = await self._http.request(
                        call.method, call.path, timeout=timeouts(call, self.timeout), **request_args(call, self.token)
                    )
                except httpx.TransportError as exc:
                    raise transport_error(call, exc) from exc
                return read(call, response)
            except HuddleError as error:
                if not should_retry(call, error, attempt, self.retries):
                    raise
                await asyncio.sleep(backoff(attempt, error))
                attempt += 1

    # Teams and agents (the admin token, or a coordinator for agents) ------------------------
    async def create_team(self, name: str) -> m.Team:
        return await self._run(self._ops.create_team(name))

    async def list_teams(self) -> List[m.Team]:
        return await self._run(self._ops.list_teams())

    async def create_agent(self, name: str, role: str) -> m.CreatedAgent:
        """Adds an agent (``coordinator``, ``tester``, ``executor``, ``observer`` or ``lead``, a
        person's token); its token is in the answer, once."""
        return await self._run(self._ops.create_agent(name, role))

    async def list_agents(self) -> List[m.Agent]:
        return await self._run(self._ops.list_agents())

    # Tasks ----------------------------------------------------------------------------------
    async def create_task(self, task: TaskInput) -> m.Task:
        """Creates one task (a :class:`NewTask` or a dict with the API's camelCase keys)."""
        return await self._run(self._ops.create_task(task))

    async def create_tasks(self, tasks: Iterable[TaskInput]) -> List[m.Task]:
        """Creates several tasks, all or none; ``blockedBy`` may name tasks of the same batch."""
        return await self._run(self._ops.create_tasks(tasks))

    async def list_tasks(
        self,
        *,
        status: Optional[str] = None,
        owner: Optional[str] = None,
        prefix: Optional[str] = None,
        ready: Optional[bool] = None,
        limit: Optional[int] = None,
        after: Optional[str] = None,
    ) -> m.TaskList:
        """One page of tasks in id order; pass ``after=page.next`` for the next page."""
        return await self._run(
            self._ops.list_tasks(status=status, owner=owner, prefix=prefix, ready=ready, limit=limit, after=after)
        )

    async def get_task(self, id: str) -> m.Task:
        return await self._run(self._ops.get_task(id))

    async def update_task(self, id: str, *, if_version: Optional[int] = None, **changes: Any) -> m.Task:
        """Changes fields (``subject``, ``description``, ``active_form``, ``status``, ``owner``,
        ``add_blocked_by``, ``remove_blocked_by``, ``metadata`` merged). With ``if_version``
        the change is refused with :class:`StaleVersion` when the task moved on."""
        return await self._run(self._ops.update_task(id, changes, if_version))

    async def claim(
        self,
        prefixes: Optional[List[str]] = None,
        *,
        wait: Optional[float] = None,
        lease: Optional[float] = None,
        project: Optional[str] = None,
        strict_project: bool = False,
        model: Optional[str] = None,
    ) -> Optional[m.Task]:
        """The next task this agent may do, or ``None``. ``wait``: seconds to long-poll for one;
        ``lease``: seconds the claim lasts unless renewed with :meth:`heartbeat`. Prefixes
        default to the role's (tester ``TEST``, executor ``QARUN``). ``project``: only tasks
        whose metadata ``project`` is that name, or that name none (``strict_project``: only
        that project's). ``model``: the model this worker calls (no ``TEST``/``QARUN`` task
        while the team's model budget is spent: ``Conflict``, ``budget_exceeded``)."""
        return await self._run(self._ops.claim(prefixes, wait, lease, project, strict_project, model))

    async def claim_many(
        self,
        max: int,
        prefixes: Optional[List[str]] = None,
        *,
        wait: Optional[float] = None,
        lease: Optional[float] = None,
        project: Optional[str] = None,
        strict_project: bool = False,
        model: Optional[str] = None,
    ) -> List[m.Task]:
        return await self._run(self._ops.claim_many(max, prefixes, wait, lease, project, strict_project, model))

    async def heartbeat(self, id: str, *, lease: Optional[float] = None) -> m.Task:
        """Extends the lease on a held task (``lease`` seconds, or the daemon's default)."""
        return await self._run(self._ops.heartbeat(id, lease))

    async def complete(self, id: str, result: Any = None) -> m.Task:
        return await self._run(self._ops.complete(id, result))

    async def fail(self, id: str, reason: str, *, final: bool = False) -> m.Task:
        """Fails a held task. With attempts left and ``final`` false it returns to ``pending``
        for another try; ``final=True`` (or the last attempt) makes it ``failed``."""
        return await self._run(self._ops.fail(id, reason, final))

    async def release(self, id: str, note: Optional[str] = None) -> m.Task:
        """Gives a held task back without using an attempt."""
        return await self._run(self._ops.release(id, note))

    # Human gates (a coordinator asks; a person answers) -------------------------------------
    async def gate_task(
        self,
        id: str,
        question: str,
        *,
        kind: Optional[str] = None,
        person_only: bool = False,
        deadline: Optional[str] = None,
        on_deadline: Optional[str] = None,
    ) -> m.Gated:
        """Holds pending task ``id`` until a person answers ``question``: ``kind="question"``
        (the default; any answer releases the task) or ``"approval"`` (:meth:`approve` releases
        it, :meth:`reject` cancels it). The question is a task of its own, ``HUMAN-NNN`` owned by
        ``human``, now among the task's ``blocked_by``; open ones:
        ``list_tasks(owner="human", status="pending")``. ``person_only``: only a person's token
        (role ``lead``) may decide it. ``deadline`` (RFC 3339): then ``on_deadline``
        (``"reject"``, the default, or ``"approve"``) is taken for the person."""
        return await self._run(self._ops.gate_task(id, question, kind, person_only, deadline, on_deadline))

    async def answer(self, id: str, answer: Optional[str] = None, *, decision: Optional[str] = None) -> m.Task:
        """Answers question ``id`` (``HUMAN-NNN``) with words, a ``decision`` (``"approve"`` or
        ``"reject"``) or both; returns the answered question. An approval gate needs a decision
        (:class:`BadRequest` otherwise); a withdrawn question, or one whose task was edited since
        it was asked, is refused with :class:`Conflict`."""
        return await self._run(self._ops.answer(id, answer, decision))

    async def ask(
        self,
        id: str,
        question: str,
        *,
        kind: Optional[str] = None,
        person_only: bool = False,
        deadline: Optional[str] = None,
        on_deadline: Optional[str] = None,
        lease_ms: Optional[int] = None,
    ) -> m.Gated:
        """Asks a person about task ``id``, which this agent holds, and keeps it while waiting:
        the question (``HUMAN-NNN``) blocks the task and the lease lasts until its deadline (at
        most the team's ``questions.maxWaitMinutes`` ahead, which is the default; then
        ``on_deadline``, ``"reject"`` by default, is taken). The decision neither releases nor
        cancels the task: read it with :meth:`decision`; the task then has ``lease_ms`` (default:
        the daemon's lease) before its next heartbeat is due. One open question per task."""
        return await self._run(self._ops.ask(id, question, kind, person_only, deadline, on_deadline, lease_ms))

    async def decision(self, id: str, *, wait_ms: int = 0) -> m.GateRecord:
        """Where question ``id`` stands (``status`` ``open``, ``answered`` or ``withdrawn``, with
        the ``decision`` and ``answer``); with ``wait_ms``, waits while it is open (at most the
        daemon's long-poll bound, 60 s by default). Loop until ``status != "open"``."""
        return await self._run(self._ops.decision(id, wait_ms))

    async def approve(self, id: str, answer: Optional[str] = None) -> m.Task:
        """Approves question ``id``: the task it held may be claimed now."""
        return await self._run(self._ops.answer(id, answer, m.APPROVE))

    async def reject(self, id: str, reason: Optional[str] = None) -> m.Task:
        """Rejects question ``id``: the task it held is cancelled for good, ``reason`` (or
        "rejected at HUMAN-NNN") its ``failure_reason``, and the coordinators are told."""
        return await self._run(self._ops.answer(id, reason, m.REJECT))

    # Messages -------------------------------------------------------------------------------
    async def post_message(
        self,
        to: str,
        type: str,
        summary: str,
        data: Optional[Mapping[str, Any]] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> m.Message:
        """Posts a message; a post repeated with the same ``idempotency_key`` is stored once
        (one is made for every call, so the client's own retries never duplicate)."""
        return await self._run(self._ops.post_message(to, type, summary, data, idempotency_key))

    async def list_messages(
        self,
        *,
        after: Optional[int] = None,
        to: Optional[str] = None,
        from_: Optional[str] = None,
        type: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> m.MessageList:
        """One page of messages, oldest first, filtered; ``after=page.next`` for the next."""
        return await self._run(self._ops.list_messages(after=after, to=to, from_=from_, type=type, limit=limit))

    async def search_messages(
        self,
        q: Optional[str] = None,
        *,
        from_: Optional[str] = None,
        to: Optional[str] = None,
        type: Optional[str] = None,
        task: Optional[str] = None,
        since: Optional[str] = None,
        until: Optional[str] = None,
        before: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> m.MessageSearchPage:
        """Every message of the team matching all filters given (``q``: words, each the start of
        a word in the summary or data), newest first, a page at a time; ``total`` counts them
        all, ``before=page.next`` gives the next page."""
        return await self._run(
            self._ops.search_messages(
                q=q, from_=from_, to=to, type=type, task=task, since=since, until=until, before=before, limit=limit
            )
        )

    async def post_messages(self, messages: Iterable[Mapping[str, Any]]) -> List[m.Message]:
        """Posts several messages in one request (``to``, ``type``, ``summary``, ``data``, an
        optional ``idempotency_key`` each), stored all or none, in order, with consecutive seqs."""
        return await self._run(self._ops.post_messages(list(messages)))

    async def cursors(self) -> m.Cursors:
        """Where both streams are now: follow ``events(after=c.events)`` and
        ``messages(after=c.messages)`` after reading a snapshot."""
        return await self._run(self._ops.cursors())

    async def me(self) -> m.Me:
        """This token's agent: its name and role."""
        return await self._run(self._ops.me())

    async def task_events(self, id: str, *, limit: Optional[int] = None) -> List[m.Event]:
        """One task's ``task.*`` events, newest first, each with the task as it became."""
        return await self._run(self._ops.task_events(id, limit))

    async def inbox(self, *, wait: Optional[float] = None, limit: Optional[int] = None) -> List[m.Message]:
        """Unacknowledged messages to this agent, its role or ``*``; waits up to ``wait`` seconds
        for a first one. Reading does not acknowledge: :meth:`ack` does."""
        return await self._run(self._ops.inbox(wait, limit))

    async def ack(self, seq: int) -> None:
        return await self._run(self._ops.ack(seq))

    # Shared memory --------------------------------------------------------------------------
    async def memory(self) -> m.Memory:
        return await self._run(self._ops.get_memory())

    async def memory_at(self, pointer: str) -> Any:
        """The value at a JSON Pointer (``/test_strategy/framework``)."""
        return await self._run(self._ops.get_memory_at(pointer))

    async def merge_memory(self, patch: Mapping[str, Any], *, if_version: Optional[int] = None) -> m.Memory:
        """Applies a JSON Merge Patch (RFC 7396: ``None`` removes a key)."""
        return await self._run(self._ops.patch_memory(patch, if_version, json_patch=False))

    async def patch_memory(self, operations: List[Mapping[str, Any]], *, if_version: Optional[int] = None) -> m.Memory:
        """Applies a JSON Patch (RFC 6902: ``[{"op": "add", "path": "/a", "value": 1}]``)."""
        return await self._run(self._ops.patch_memory(list(operations), if_version, json_patch=True))

    async def replace_memory(self, doc: Any, *, if_version: Optional[int] = None) -> m.Memory:
        return await self._run(self._ops.replace_memory(doc, if_version))

    async def memory_history(self, *, limit: Optional[int] = None) -> List[m.MemoryChange]:
        return await self._run(self._ops.memory_history(limit))

    # Test history ---------------------------------------------------------------------------
    async def post_test_run(
        self, project: str, tree: str, outcomes: Iterable[Mapping[str, str]], *, tier: Optional[str] = None
    ) -> Any:
        """Records a run's per-test outcomes (``[{"nodeid", "outcome"}]``); ``tier`` when it was one
        test tier's run (``unit``, ``pbt``, ``integration``, ``e2e``)."""
        return await self._run(self._ops.post_test_run(project, tree, outcomes, tier))

    async def test_history(self, project: Optional[str] = None, *, tier: Optional[str] = None) -> m.TestHistory:
        """The project's kept runs, oldest first; ``tier``: only that test tier's runs."""
        return await self._run(self._ops.test_history(project, tier))

    async def flaky_tests(
        self, project: Optional[str] = None, tree: Optional[str] = None, *, tier: Optional[str] = None
    ) -> m.FlakyTests:
        """Tests that passed and failed on one tree; ``tier``: only that test tier's runs count."""
        return await self._run(self._ops.flaky_tests(project, tree, tier))

    async def regressions(self, project: Optional[str] = None, *, tier: Optional[str] = None) -> Any:
        """Tests failing in the latest run that passed before; ``tier``: within that test tier."""
        return await self._run(self._ops.regressions(project, tier))

    # Streams --------------------------------------------------------------------------------
    def events(self, *, type: Optional[str] = None, after: int = 0, **options: Any) -> AsyncIterator[m.Event]:
        """Every change in the team, from ``after`` on, live, resuming across drops. ``type``
        filters (``task.completed``, or a family: ``task.``)."""
        stream = _Stream(
            self._ops._t("/events"),
            self.token,
            {"type": type} if type else {},
            StreamOptions(after=after, **options),
            lambda d: m.from_json(m.Event, d),
        )
        return afollow(self._http, stream)

    def messages(
        self,
        *,
        to: Optional[str] = None,
        from_: Optional[str] = None,
        type: Optional[str] = None,
        after: int = 0,
        **options: Any,
    ) -> AsyncIterator[m.Message]:
        """The team's messages, from ``after`` on, live, resuming across drops."""
        params = {k: v for k, v in {"to": to, "from": from_, "type": type}.items() if v}
        stream = _Stream(
            self._ops._t("/messages/stream"), self.token, params, StreamOptions(after=after, **options), _message
        )
        return afollow(self._http, stream)


def _message(data: Any) -> m.Message:
    return m.from_json(m.Message, data)
