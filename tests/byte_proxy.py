"""A TCP proxy on loopback that counts the bytes a server sends its clients: put it between a
driver and a database to measure what leaves the database, whatever the driver or protocol."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress


class ByteProxy:
    """Listens on 127.0.0.1:`port`, forwards every connection to `target`, and counts the bytes
    coming back from it (`from_server`) and the connections made (`connections`)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.from_server = 0
        self.connections = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._closed = threading.Event()

    def reset(self) -> int:
        """The bytes counted so far, and start again from zero."""
        with self._lock:
            counted, self.from_server, self.connections = self.from_server, 0, 0
        return counted

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            with self._lock:
                self.connections += 1
                self._sockets += [client, server]
            for source, sink, counted in ((client, server, False), (server, client, True)):
                pump = threading.Thread(target=self._pump, args=(source, sink, counted))
                pump.daemon = True
                pump.start()
                self._threads.append(pump)

    def _pump(self, source: socket.socket, sink: socket.socket, counted: bool) -> None:
        try:
            while chunk := source.recv(65536):
                if counted:
                    with self._lock:
                        self.from_server += len(chunk)
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                _shut(end)

    @contextmanager
    def running(self) -> Iterator[ByteProxy]:
        acceptor = threading.Thread(target=self._accept, daemon=True)
        acceptor.start()
        try:
            yield self
        finally:
            self._closed.set()
            _shut(self._listener)  # wakes the blocked accept()
            acceptor.join()
            self._listener.close()
            with self._lock:
                sockets = list(self._sockets)
            for end in sockets:
                _shut(end)  # wakes the pumps' blocked recv()
            for pump in self._threads:
                pump.join()
            for end in sockets:
                end.close()


def _shut(end: socket.socket) -> None:
    with suppress(OSError):
        end.shutdown(socket.SHUT_RDWR)
