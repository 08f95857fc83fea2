"""The keep-alive pool of `AsyncHTTPClient`: slots for requests, idle connections per origin.

A fetch first takes a *slot*: at most `max_clients` requests are in flight, at most
`max_host_clients` per origin (the pool's key: scheme, host, port and TLS settings).
Requests that find no free slot wait, bounded by `queue_timeout`; those of one origin are
served in arrival order, and the origins with waiting requests take turns, so that one busy
host does not hold up the others. With its slot a fetch takes the most recently used idle
connection to its origin, or opens one; at the end it gives the slot back, with the
connection if it can carry another request.

The waiting requests of an origin, and the origins taking turns, are ordered dicts: a
request cancelled or timed out leaves its queue in O(1) from wherever it is (searching a
deque for it made 10,000 requests that time out together take seconds when they did not
time out in the order they came).

Invariants: an origin is in turn exactly while it has waiting requests and a slot of its
own free; every connection is either in use by exactly one fetch or idle here; from the
loop pass after the one it went idle in, an idle connection has a one-byte read pending,
so whatever the server sends to it (a close, a reset, stray bytes) retires it; at most
`max_clients` connections are open, idle ones included (the least recently used idle one
is closed to make room).

The read is started a pass late because a crawl's worker takes its connection back at
once, in the same pass: a read started and cancelled for nothing cost more than the rest
of the pool's work for a request. Whatever came meanwhile is not missed: the stream has
read it ahead, or seen the close, and the read sees that as soon as it starts.

A connection is any object with a `stream` (an IOStream) and an `idle_read` attribute, which
the pool sets while the connection is idle.
"""
from __future__ import absolute_import, division, print_function

import collections
import functools
import select

from tinytornado._httperrors import HTTPTimeoutError
from tinytornado.concurrent import Future

__all__ = ['ConnectionPool', 'SlotWaiter']


class _HostPool(object):
    """The connections to one origin, and the requests waiting for a slot there."""
    __slots__ = ('key', 'idle', 'active', 'waiting')

    def __init__(self, key):
        self.key = key
        self.idle = collections.deque()  # most recently used last
        self.active = 0  # slots held: requests in flight or opening a connection
        self.waiting = collections.OrderedDict()  # _SlotRequest -> None, in arrival order


class SlotWaiter(object):
    """What waits in the pool's queue for a slot, at the _HostPool `host`.

    The pool calls `granted()` once it has taken a slot for it, or `timed_out(error)` (an
    HTTPTimeoutError) after queue_timeout; either way it has left the queue.
    `ConnectionPool.stop_waiting` takes it out earlier (a cancellation).
    """
    __slots__ = ('host', 'timer')

    def granted(self):
        raise NotImplementedError

    def timed_out(self, error):
        raise NotImplementedError


class _SlotRequest(SlotWaiter):
    """`acquire`'s waiter: a Future of the _HostPool, which cancelling stops waiting."""
    __slots__ = ('pool', 'future')

    def __init__(self, pool):
        self.pool = pool
        self.future = Future()
        self.future.set_canceller(self.cancel)

    def cancel(self):
        self.pool.stop_waiting(self)
        self.future.set_cancelled()
        return True

    def granted(self):
        self.future.set_result(self.host)

    def timed_out(self, error):
        self.future.set_exception(error)


class ConnectionPool(object):
    """Slots and idle connections for every origin (see the module docstring).

    Args:
        io_loop: the loop whose timers run the queue timeouts.
        max_clients, max_host_clients: the most slots held at once, in all and per origin.
        queue_timeout: the most seconds a request waits for a slot, or None for no limit.
    """

    def __init__(self, io_loop, max_clients, max_host_clients, queue_timeout):
        self.io_loop = io_loop
        self.max_clients = max_clients
        self.max_host_clients = max_host_clients
        self.queue_timeout = queue_timeout
        self.hosts = {}  # key -> _HostPool
        self.active = 0
        self.idle = collections.OrderedDict()  # every idle connection -> its _HostPool,
        #                                        least recently used first
        # _HostPool -> None: those with waiting requests and room of their own, in turn.
        self.hosts_in_turn = collections.OrderedDict()
        self.to_watch = []  # connections gone idle in this pass, their read not started yet
        self.closed = False

    def acquire(self, key):
        """A slot at the origin `key`: its _HostPool if one is free, else a Future of it,
        which fails with HTTPTimeoutError after queue_timeout; cancelling it stops waiting."""
        host = self.try_acquire(key)
        if host is not None:
            return host
        return self.wait(key, _SlotRequest(self)).future

    def try_acquire(self, key):
        """A slot at the origin `key`: its _HostPool, or None if none is free now."""
        host = self.hosts.get(key)
        if host is None:
            host = self.hosts[key] = _HostPool(key)
        if not host.waiting and self._has_room(host):
            self._take_slot(host)
            return host
        return None

    def wait(self, key, waiter):
        """Queue `waiter` (a SlotWaiter) for a slot at the origin `key`, where
        `try_acquire` has just found none; returns it."""
        host = waiter.host = self.hosts[key]
        waiter.timer = None
        host.waiting[waiter] = None
        self._take_turn(host)
        if self.queue_timeout is not None:
            waiter.timer = self.io_loop.call_later(self.queue_timeout,
                                                   functools.partial(self._time_out, waiter))
        return waiter

    def release(self, host, connection):
        """Give back a slot, with the connection to keep idle (None if it was closed)."""
        host.active -= 1
        self.active -= 1
        if connection is not None:
            self._keep_idle(host, connection)
        else:
            self._forget_if_unused(host)
        self._take_turn(host)
        self._serve_waiting()

    def _time_out(self, waiter):
        waiter.timer = None
        self.stop_waiting(waiter)
        waiter.timed_out(HTTPTimeoutError('Timeout in request queue'))

    def stop_waiting(self, waiter):
        host = waiter.host
        del host.waiting[waiter]
        if waiter.timer is not None:
            self.io_loop.remove_timeout(waiter.timer)
        if not host.waiting:
            self.hosts_in_turn.pop(host, None)
            self._forget_if_unused(host)

    def take_idle(self, host):
        """The most recently used idle connection of `host` that still looks alive, or
        None; if a new connection is needed and none may open, an idle one is closed."""
        while host.idle:
            connection = host.idle.pop()
            del self.idle[connection]
            if connection.idle_read is not None:
                connection.idle_read.cancel()
                connection.idle_read = None
            if _looks_alive(connection.stream):
                return connection
            connection.stream.close()
        if self.active + len(self.idle) > self.max_clients:
            self._close_idle(next(iter(self.idle)))
        return None

    def close(self):
        """Close every idle connection; connections in use close when released."""
        self.closed = True
        for connection in list(self.idle):
            self._close_idle(connection)

    def _has_room(self, host):
        return self.active < self.max_clients and host.active < self.max_host_clients

    def _take_slot(self, host):
        host.active += 1
        self.active += 1

    def _take_turn(self, host):
        if host.waiting and host.active < self.max_host_clients:
            self.hosts_in_turn[host] = None  # where it was, if it is in turn already

    def _serve_waiting(self):
        while self.hosts_in_turn and self.active < self.max_clients:
            host = self.hosts_in_turn.popitem(last=False)[0]
            waiter = host.waiting.popitem(last=False)[0]
            if waiter.timer is not None:
                self.io_loop.remove_timeout(waiter.timer)
            self._take_slot(host)
            waiter.granted()
            self._take_turn(host)

    def _keep_idle(self, host, connection):
        if self.closed:
            connection.stream.close()
            self._forget_if_unused(host)
            return
        host.idle.append(connection)
        self.idle[connection] = host
        if not self.to_watch:
            self.io_loop.add_callback(self._watch_idle)
        self.to_watch.append(connection)

    def _watch_idle(self):
        connections, self.to_watch = self.to_watch, []
        for connection in connections:
            # Nothing may arrive on an idle connection: this read ends only when something
            # does (a close, a reset, stray bytes), and then the connection is retired.
            if connection.idle_read is None and connection in self.idle:
                connection.idle_read = connection.stream.read_bytes(1, partial=True)
                connection.idle_read.add_done_callback(
                    functools.partial(self._on_idle_read, connection))

    def _on_idle_read(self, connection, future):
        if future.cancelled():
            return  # taken from the pool for a request
        future.exception()  # seen: a closed idle connection is not worth a log line
        if connection in self.idle:
            self._close_idle(connection)

    def _close_idle(self, connection):
        host = self.idle.pop(connection)
        host.idle.remove(connection)
        connection.stream.close()
        self._forget_if_unused(host)

    def _forget_if_unused(self, host):
        # A crawl meets many origins: keep only those with something in them.
        if (not host.active and not host.idle and not host.waiting and
                self.hosts.get(host.key) is host):
            del self.hosts[host.key]


def _looks_alive(stream):
    """False if the stream is closed or its socket is readable: an idle connection has
    nothing to read unless the server closed or reset it (or misbehaved)."""
    if stream.closed():
        return False
    fileno = stream.fileno()
    if hasattr(select, 'poll'):
        poller = select.poll()
        poller.register(fileno, select.POLLIN)
        return not poller.poll(0)
    return not select.select([fileno], [], [], 0)[0]
