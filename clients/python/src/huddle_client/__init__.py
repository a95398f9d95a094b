"""huddle-client: a typed Python client for huddle, the coordination daemon for AI agent teams.

>>> from huddle_client import Client
>>> client = Client.from_env()          # HUDDLE_URL, HUDDLE_TOKEN, HUDDLE_TEAM
>>> for event in client.events():       # every change, resuming across drops
...     print(event.type, event.data)
"""

from .aio import AsyncClient
from .aio_worker import AsyncTaskContext, AsyncWorker
from .client import Client
from .errors import (
    BadRequest,
    Conflict,
    Forbidden,
    HuddleError,
    NotFound,
    RateLimited,
    ServerError,
    StaleVersion,
    TooLarge,
    TransportError,
    Unauthorized,
)
from .models import (
    CLOSED,
    Agent,
    CreatedAgent,
    Event,
    FlakyTest,
    FlakyTests,
    Gated,
    GateRecord,
    GateRequest,
    Memory,
    MemoryChange,
    Message,
    MessageList,
    MessageSearchPage,
    Me,
    Cursors,
    NewTask,
    Task,
    TaskList,
    Team,
    TestHistory,
    TestRunSummary,
)
from .worker import FinalFailure, Retry, TaskContext, Worker, WorkerStats

__all__ = [
    "AsyncClient",
    "AsyncTaskContext",
    "AsyncWorker",
    "Client",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "HuddleError",
    "NotFound",
    "RateLimited",
    "ServerError",
    "StaleVersion",
    "TooLarge",
    "TransportError",
    "Unauthorized",
    "CLOSED",
    "Agent",
    "CreatedAgent",
    "Event",
    "FlakyTest",
    "FlakyTests",
    "Gated",
    "GateRecord",
    "GateRequest",
    "Memory",
    "MemoryChange",
    "Message",
    "MessageList",
    "MessageSearchPage",
    "Me",
    "Cursors",
    "NewTask",
    "Task",
    "TaskList",
    "Team",
    "TestHistory",
    "TestRunSummary",
    "FinalFailure",
    "Retry",
    "TaskContext",
    "Worker",
    "WorkerStats",
]
