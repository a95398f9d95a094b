"""The connection settings the ``huddle`` CLI reads, for :meth:`Client.from_env`."""

from __future__ import annotations

import os
from typing import Optional, Tuple


def from_env() -> Tuple[str, str, Optional[str]]:
    token = os.environ.get("HUDDLE_TOKEN")
    if not token:
        raise ValueError("HUDDLE_TOKEN is not set: export an agent's token (or the admin token)")
    url = os.environ.get("HUDDLE_URL") or "http://127.0.0.1:7700"
    return url, token, os.environ.get("HUDDLE_TEAM") or None
