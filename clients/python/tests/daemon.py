"""A real ``huddled`` for the tests: the built binary as a child process on port 0 with its own
temporary data directory (``HUDDLED`` names the binary; else ``target/debug/huddled`` of this
repository). Nothing is faked: every test speaks HTTP to it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import List, Optional

ADMIN = "python-client-admin-token-0123456789abcdef"
REPO = Path(__file__).resolve().parents[3]


def binary() -> str:
    path = os.environ.get("HUDDLED") or str(REPO / "target" / "debug" / "huddled")
    if not Path(path).is_file():
        raise RuntimeError(f"huddled is not built at {path}: run `cargo build --bin huddled` or set HUDDLED")
    return path


class Daemon:
    """``huddled --listen 127.0.0.1:PORT --data-dir DIR``; ``port`` 0 picks a free one, and a
    restart reuses the one it got so clients can reconnect."""

    def __init__(self, port: int = 0, data_dir: Optional[str] = None) -> None:
        self._own_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="huddle-pyclient-")
        self.lines: List[str] = []
        env = dict(os.environ)
        for key in list(env):
            if key.startswith("HUDDLE_"):
                del env[key]
        env.update(
            HUDDLE_ADMIN_TOKEN=ADMIN,
            HUDDLE_LOG="warn,huddle_daemon=info",
            # Expired leases are noticed quickly, so lease tests need not wait long.
            HUDDLE_TASKS_LEASE_SWEEP_MS="50",
            HUDDLE_TASKS_MIN_LEASE_MS="50",
        )
        self.proc = subprocess.Popen(
            [binary(), "--listen", f"127.0.0.1:{port}", "--data-dir", self.data_dir],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.url = self._wait_listening()
        self.port = int(self.url.rsplit(":", 1)[1])

    def _wait_listening(self) -> str:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            found = re.search(r"listening on (http://[0-9.:]+)", re.sub(r"\x1b\[[0-9;]*m", "", line))
            if found:
                # Keep reading its log so it never blocks on a full pipe.
                threading.Thread(target=self._drain, daemon=True).start()
                return found.group(1)
        raise RuntimeError("huddled exited before listening:\n" + "".join(self.lines))

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def stop(self) -> None:
        """SIGTERM, and wait for a clean exit."""
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)

    def restart(self) -> "Daemon":
        """Stops and starts again on the same port and data."""
        self.stop()
        again = Daemon(self.port, self.data_dir)
        again._own_dir, self._own_dir = self._own_dir, False
        return again

    def close(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
