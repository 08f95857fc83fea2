"""A real redis-server for the Redis tests, started on a free loopback port and stopped
after the test: the `redis_server` fixture (default options) and `start_redis_server`
(a factory taking options, e.g. ``start_redis_server(appendonly='yes')``).

Tests are skipped, saying why, only where no redis-server is installed (Debian's package
``redis-server``; ``.ci/run`` installs it). Persistence is off unless a test turns it
on; the data directory is the test's own temporary directory.

The server is ready when it logs "Ready to accept connections", read from its stdout:
no polling, no sleep. A thread then drains its output (into `log`) so that it never
blocks on a full pipe.
"""
from __future__ import absolute_import, division, print_function

import os
import select
import signal
import socket
import subprocess
import threading
import time

import pytest

__all__ = ['RedisServer', 'redis_server', 'start_redis_server', 'redis_server_path']

READY_TEXT = b'Ready to accept connections'
START_TIMEOUT = 20


def redis_server_path():
    """The redis-server program on $PATH (or in /usr/sbin, /usr/bin), else None."""
    for directory in os.environ.get('PATH', '').split(os.pathsep) + ['/usr/sbin', '/usr/bin']:
        path = os.path.join(directory, 'redis-server')
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _port_nobody_uses():
    """A port free right now. Redis must bind it itself, so a race with another process
    is possible: `RedisServer.start` tries another port when the bind fails."""
    sock = socket.socket()
    try:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]
    finally:
        sock.close()


class RedisServer(object):
    """One redis-server process over `directory`; `options` are its config directives,
    given on its command line (``{'appendonly': 'yes', 'requirepass': 'secret'}``)."""

    def __init__(self, program, directory, options=None):
        self.program = program
        self.directory = directory
        self.options = dict(save='', appendonly='no')
        self.options.update(options or {})
        self.port = None
        self.process = None
        self._drainer = None
        self.log = []  # its output lines, bytes

    def url(self, db=0, password=None):
        auth = ':%s@' % password if password is not None else ''
        return 'redis://%s127.0.0.1:%d/%d' % (auth, self.port, db)

    def start(self, attempts=3):
        """Start it (on the same port as before, if it ran before); returns once it
        accepts connections."""
        for attempt in range(attempts):
            if self.port is None or attempt:
                self.port = _port_nobody_uses()
            if self._start_once():
                return
        raise RuntimeError('redis-server did not start:\n%s' % b'\n'.join(self.log[-20:]))

    def _start_once(self):
        arguments = [self.program, '--port', str(self.port), '--bind', '127.0.0.1',
                     '--dir', self.directory, '--daemonize', 'no', '--logfile', '']
        for name, value in sorted(self.options.items()):
            arguments += ['--' + name, value]
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, stdin=subprocess.PIPE)
        if self._wait_ready():
            self._drainer = threading.Thread(target=self._drain, args=(self.process,))
            self._drainer.start()
            return True
        self.kill()
        return False

    def _wait_ready(self):
        """Read its output until it is ready (True) or it exits or hangs (False).

        Read with os.read, not readline: a file object's buffer may hold lines that
        select cannot see."""
        deadline = time.time() + START_TIMEOUT
        fd = self.process.stdout.fileno()
        pending = b''
        while time.time() < deadline:
            readable, _, _ = select.select([fd], [], [], deadline - time.time())
            chunk = os.read(fd, 65536) if readable else b''
            if not chunk:
                return False
            lines = (pending + chunk).split(b'\n')
            pending = lines.pop()
            self.log.extend(lines)
            if any(READY_TEXT in line for line in lines):
                return True
        return False

    def _drain(self, process):
        fd = process.stdout.fileno()
        for chunk in iter(lambda: os.read(fd, 65536), b''):
            self.log.extend(chunk.splitlines())

    def stop(self):
        """Stop it as an operator would (SIGTERM: it saves, if persistence is on)."""
        self._end(signal.SIGTERM)

    def kill(self):
        """kill -9: it saves nothing more."""
        self._end(signal.SIGKILL)

    def _end(self, signum):
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            os.kill(process.pid, signum)
        process.wait()
        drainer, self._drainer = self._drainer, None
        if drainer is not None:
            drainer.join()  # it ends at the end of the output, which exit closed
        process.stdin.close()
        process.stdout.close()


@pytest.fixture
def start_redis_server(tmpdir):
    """A factory: ``start_redis_server(**options)`` -> a started `RedisServer`, stopped
    after the test."""
    program = redis_server_path()
    if program is None:
        pytest.skip('redis-server is not installed (Debian package redis-server; '
                    '.ci/run installs it)')
    servers = []

    def start(**options):
        directory = str(tmpdir.mkdir('redis-%d' % len(servers)))
        server = RedisServer(program, directory, options)
        servers.append(server)
        server.start()
        return server

    yield start
    for server in servers:
        server.kill()


@pytest.fixture
def redis_server(start_redis_server):
    """A started redis-server without persistence, stopped after the test."""
    return start_redis_server()
