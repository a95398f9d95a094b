"""The team's model budget and its ledger (``/budget``, ``/spend``): models, and the methods
the synchronous and asyncio clients get from :class:`SpendMethods` and
:class:`AsyncSpendMethods` (their requests are built in :mod:`huddle_client._ops`).

A worker reserves each model call before making it and settles it after with the tokens it
used; a reservation refused because the budget is spent raises a
:class:`~huddle_client.errors.Conflict` whose ``code`` is :data:`BUDGET_EXCEEDED`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


#: The error code of a refused reservation or model-calling claim.
BUDGET_EXCEEDED = "budget_exceeded"


@dataclass
class SpendTotals:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens: int = 0
    #: Micro-units of the team's currency (1,000,000 = one dollar when prices are in dollars).
    cost_micros: int = 0


@dataclass
class SpendCall:
    id: int
    agent: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_micros: int
    day: str
    created_at: str
    settled: bool
    task: Optional[str] = None


@dataclass
class SpendGroup:
    key: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens: int = 0
    cost_micros: int = 0


@dataclass
class SpendReport:
    total: SpendTotals
    by_task: List[SpendGroup] = field(default_factory=list)
    by_agent: List[SpendGroup] = field(default_factory=list)
    by_model: List[SpendGroup] = field(default_factory=list)
    by_day: List[SpendGroup] = field(default_factory=list)
    _nested = {"total": SpendTotals, "by_task": SpendGroup, "by_agent": SpendGroup,
               "by_model": SpendGroup, "by_day": SpendGroup}


@dataclass
class BudgetSettings:
    """The budget (input and output): limits left ``None`` are none."""

    #: ``total`` or ``day`` (UTC).
    period: str = "total"
    max_tokens: Optional[int] = None
    max_cost_micros: Optional[int] = None
    task_max_tokens: Optional[int] = None
    task_max_cost_micros: Optional[int] = None
    warn_percent: Optional[int] = None
    #: By model: ``{"promptPerMillion": …, "completionPerMillion": …}`` in micro-units.
    prices: Optional[Dict[str, Dict[str, int]]] = None


@dataclass
class BudgetView:
    version: int
    budget: BudgetSettings
    period: str
    spent: SpendTotals
    exhausted: bool
    remaining_tokens: Optional[int] = None
    remaining_cost_micros: Optional[int] = None
    updated_by: Optional[str] = None
    updated_at: Optional[str] = None
    _nested = {"budget": BudgetSettings, "spent": SpendTotals}


class SpendMethods:
    """The synchronous client's spend methods."""

    def budget(self) -> BudgetView:
        """The budget, what the team spent in its period and whether calls are refused."""
        return self._run(self._ops.budget())  # type: ignore[attr-defined]

    def set_budget(self, budget: Any, *, if_match: Optional[int] = None) -> BudgetView:
        """Replaces the budget (coordinator, lead); with ``if_match``, 412 when it changed."""
        return self._run(self._ops.set_budget(budget, if_match))  # type: ignore[attr-defined]

    def reserve_spend(self, model: str, task: Optional[str] = None) -> SpendCall:
        """Reserves one model call before making it; ``Conflict`` (``budget_exceeded``) when spent."""
        return self._run(self._ops.reserve_spend(model, task))  # type: ignore[attr-defined]

    def settle_spend(self, id: int, prompt_tokens: int, completion_tokens: int) -> SpendCall:
        """Records the tokens reserved call ``id`` used."""
        return self._run(self._ops.settle_spend(id, prompt_tokens, completion_tokens))  # type: ignore[attr-defined]

    def spend_report(self, task: Optional[str] = None) -> SpendReport:
        """Totals, by task, agent, model and day (one task's calls when given)."""
        return self._run(self._ops.spend_report(task))  # type: ignore[attr-defined]


class AsyncSpendMethods:
    """The asyncio client's spend methods."""

    async def budget(self) -> BudgetView:
        """The budget, what the team spent in its period and whether calls are refused."""
        return await self._run(self._ops.budget())  # type: ignore[attr-defined]

    async def set_budget(self, budget: Any, *, if_match: Optional[int] = None) -> BudgetView:
        """Replaces the budget (coordinator, lead); with ``if_match``, 412 when it changed."""
        return await self._run(self._ops.set_budget(budget, if_match))  # type: ignore[attr-defined]

    async def reserve_spend(self, model: str, task: Optional[str] = None) -> SpendCall:
        """Reserves one model call before making it; ``Conflict`` (``budget_exceeded``) when spent."""
        return await self._run(self._ops.reserve_spend(model, task))  # type: ignore[attr-defined]

    async def settle_spend(self, id: int, prompt_tokens: int, completion_tokens: int) -> SpendCall:
        """Records the tokens reserved call ``id`` used."""
        return await self._run(self._ops.settle_spend(id, prompt_tokens, completion_tokens))  # type: ignore[attr-defined]

    async def spend_report(self, task: Optional[str] = None) -> SpendReport:
        """Totals, by task, agent, model and day (one task's calls when given)."""
        return await self._run(self._ops.spend_report(task))  # type: ignore[attr-defined]
