"""The pool's queues: requests that stop waiting (cancelled, timed out) in any order leave
nothing behind, and the pool goes on serving the others in order.

The timers of queue_timeout are checked by the io_loop fixture: one left registered fails
the test.
"""
from __future__ import absolute_import, division, print_function

import random

import pytest

from tinytornado import gen
from tinytornado._httperrors import HTTPTimeoutError
from tinytornado._httppool import ConnectionPool
from tinytornado.concurrent import Future, TimeoutError
from tinytornado.httpclient import AsyncHTTPClient
from tinytornado.iostream import StreamClosedError
from tinytornado.tcpserver import TCPServer
from tinytornado.testing import bind_unused_port

ORIGINS = [('http', name, 80, None) for name in ('a.test', 'b.test', 'c.test')]


def assert_no_waiting(pool):
    assert list(pool.hosts_in_turn) == []
    assert [list(host.waiting) for host in pool.hosts.values()] == [[]] * len(pool.hosts)


def test_requests_cancelled_in_any_order_leave_the_queues_empty(io_loop):
    pool = ConnectionPool(io_loop, max_clients=2, max_host_clients=2, queue_timeout=60)
    holders = [pool.acquire(ORIGINS[0]), pool.acquire(ORIGINS[1])]  # every slot
    waiting = [pool.acquire(ORIGINS[i % 3]) for i in range(3000)]
    assert set(map(type, waiting)) == {Future}
    in_any_order = list(waiting)
    random.Random(19).shuffle(in_any_order)
    for future in in_any_order:
        assert future.cancel()
    assert all(future.cancelled() for future in waiting)
    assert_no_waiting(pool)
    assert sorted(pool.hosts) == ORIGINS[:2]  # the third origin, emptied, is forgotten
    # A slot given back goes to the next request, in order, and none is left over.
    later = [pool.acquire(ORIGINS[2]), pool.acquire(ORIGINS[0])]
    pool.release(holders[0], None)
    assert later[0].result() is pool.hosts[ORIGINS[2]] and not later[1].done()
    pool.release(holders[1], None)
    assert later[1].result() is holders[0]
    pool.release(later[0].result(), None)
    pool.release(later[1].result(), None)
    assert (pool.active, pool.hosts) == (0, {})


def test_requests_timed_out_and_cancelled_together_leave_the_queues_empty(io_loop,
                                                                           virtual_clock):
    pool = ConnectionPool(io_loop, max_clients=1, max_host_clients=1, queue_timeout=1)
    holder = pool.acquire(ORIGINS[0])
    waiting = [pool.acquire(ORIGINS[i % 2]) for i in range(200)]
    for future in waiting[1::2]:
        future.cancel()
    io_loop.run_sync(lambda: gen.sleep(2))
    errors = [future.exception() for future in waiting[::2]]
    assert set(map(type, errors)) == {HTTPTimeoutError}
    assert set(map(str, errors)) == {'Timeout in request queue'}
    assert_no_waiting(pool)
    pool.release(holder, None)
    assert (pool.active, pool.hosts) == (0, {})


class SilentServer(TCPServer):
    """Reads requests and never answers them."""

    def __init__(self):
        super(SilentServer, self).__init__()
        sock, self.port = bind_unused_port()
        self.add_socket(sock)

    @gen.coroutine
    def handle_stream(self, stream, address):
        try:
            yield stream.read_until_close()
        except StreamClosedError:
            pass


@pytest.fixture
def silent_server(io_loop):
    server = SilentServer()
    yield server
    server.stop()


@gen.coroutine
def fetch_with_timeout(client, url, deadline):
    try:
        yield gen.with_timeout(deadline, client.fetch(url))
    except TimeoutError:
        raise gen.Return('timed out')


def test_fetches_that_time_out_in_any_order_leave_the_pool_empty(io_loop, virtual_clock,
                                                                  silent_server):
    client = AsyncHTTPClient(force_instance=True, max_clients=2)
    url = 'http://127.0.0.1:%d/' % silent_server.port
    rng = random.Random(19)

    @gen.coroutine
    def fetch_all():
        # Deadlines in another order than the fetches came: they leave the queue from
        # everywhere in it, the two fetches in flight among them.
        deadlines = [io_loop.time() + 1 + rng.random() for _ in range(1000)]
        outcomes = yield [fetch_with_timeout(client, url, deadline) for deadline in deadlines]
        raise gen.Return(outcomes)

    try:
        assert io_loop.run_sync(fetch_all) == ['timed out'] * 1000
        pool = client._pool
        assert_no_waiting(pool)
        assert (pool.active, pool.hosts, len(pool.idle)) == (0, {}, 0)
    finally:
        client.close()
