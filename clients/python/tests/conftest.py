"""Fixtures: one real daemon per test session, a fresh team per test."""

from __future__ import annotations

import itertools
import os
import sys
from dataclasses import dataclass
from typing import Iterator

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from daemon import ADMIN, Daemon  # noqa: E402

from huddle_client import Client  # noqa: E402

_teams = itertools.count(1)


@pytest.fixture(scope="session")
def daemon() -> Iterator[Daemon]:
    d = Daemon()
    yield d
    d.close()


@dataclass
class Team:
    name: str
    url: str
    admin: Client
    coordinator: Client

    def agent(self, name: str, role: str) -> Client:
        created = self.admin.create_agent(name, role)
        return Client(self.url, created.token, self.name)


@pytest.fixture
def team(daemon: Daemon) -> Iterator[Team]:
    name = f"t{os.getpid()}-{next(_teams)}"
    admin = Client(daemon.url, ADMIN)
    admin.create_team(name)
    admin = admin.with_team(name)
    coord = admin.create_agent("coordinator", "coordinator")
    t = Team(name, daemon.url, admin, Client(daemon.url, coord.token, name))
    yield t
    t.coordinator.close()
    admin.close()
