"""A TCP proxy in front of the daemon that can cut every open connection at once: the network
dropping under a stream, without touching the daemon."""

from __future__ import annotations

import socket
import threading
from typing import List


class CuttingProxy:
    def __init__(self, target_port: int, port: int = 0) -> None:
        self.target_port = target_port
        self.server = socket.create_server(("127.0.0.1", port))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.connections: List[socket.socket] = []
        self.lock = threading.Lock()
        #: How many client connections were accepted so far.
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            with self.lock:
                self.accepted += 1
                self.connections += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        """Closes every connection made so far (new ones are still accepted)."""
        with self.lock:
            conns, self.connections = self.connections, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        self.server.close()
        self.cut()
