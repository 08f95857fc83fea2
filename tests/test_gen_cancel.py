"""A cancel() that a coroutine's Future accepted always reaches the coroutine.

The race: what the coroutine waits for wakes it, and in the same loop pass, before it has
resumed, its Future is cancelled. The outcome of the wake-up is delivered first (a lock
acquired or an item taken is never lost); CancelledError then comes at the next yield
that waits, whatever that waits for. Before issue 28 it came only if that wait accepted a
cancel of its own: a fetch whose connection completed in the pass where its timeout fired
sent its request and waited for ever, holding a pool slot and a socket.
"""
from __future__ import absolute_import, division, print_function

import os
import random
import socket

import pytest

from tinytornado import gen
from tinytornado.concurrent import CancelledError, Future
from tinytornado.httpclient import AsyncHTTPClient

pytestmark = pytest.mark.usefixtures('wrapper_kind')


@pytest.fixture
def vloop(io_loop, virtual_clock):
    return io_loop


class _WakeUp(object):
    """Something a coroutine waits on, and how to wake it; `racing(cancel)` wakes it and
    calls `cancel` in one loop pass."""

    def __init__(self, io_loop):
        self.io_loop = io_loop


class _ResolvedFuture(_WakeUp):
    def wait(self):
        self.future = Future()
        return self.future

    def race(self, cancel):
        def wake_then_cancel():
            self.future.set_result('woken')
            cancel()
        self.io_loop.add_callback(wake_then_cancel)


class _Timer(_WakeUp):
    def wait(self):
        return gen.sleep(1)

    def race(self, cancel):
        # The same deadline on the virtual clock, and after the sleep's timer: one pass.
        self.io_loop.call_later(1, cancel)


class _Moment(_WakeUp):
    yielded = gen.moment

    def wait(self):
        return self.yielded

    def race(self, cancel):
        cancel()  # Its resumption is already scheduled for the next pass.


class _NoneYield(_Moment):
    yielded = None


class _Multi(_ResolvedFuture):
    def wait(self):
        self.future, self.other = Future(), Future()
        return [self.future, self.other]

    def race(self, cancel):
        def wake_then_cancel():
            self.other.set_result('too')
            self.future.set_result('woken')
            cancel()
        self.io_loop.add_callback(wake_then_cancel)


class _Coroutine(_ResolvedFuture):
    # The coroutine waited on is woken and cancelled in one pass (the cancel reaches it
    # through its parent's): it returns at once, never waiting again, so only its parent
    # can still be cancelled.
    def wait(self):
        @gen.coroutine
        def child(future):
            value = yield future
            raise gen.Return(value)
        return child(_ResolvedFuture.wait(self))


WAKE_UPS = {'a Future resolved': _ResolvedFuture, 'a timer': _Timer, 'a moment': _Moment,
            'a None yield': _NoneYield, 'a multi': _Multi, 'a coroutine ending': _Coroutine}


def _refusing_future():
    future = Future()
    future.set_canceller(lambda: False)
    return future


NEXT_WAITS = {'a Future': Future, 'a Future refusing the cancel': _refusing_future}


def _race(io_loop, wake_up_name, next_wait=None):
    """Race a cancel against the wake-up; what the coroutine saw, and its Future."""
    wake_up = WAKE_UPS[wake_up_name](io_loop)
    trace = []

    @gen.coroutine
    def coroutine():
        try:
            value = yield wake_up.wait()
        except CancelledError:
            trace.append('cancelled at the wake-up')
            raise
        trace.append(('woken', value))
        if next_wait is None:
            raise gen.Return('returned')
        try:
            yield NEXT_WAITS[next_wait]()
        except CancelledError:
            trace.append('cancelled at the next wait')
            raise
        trace.append('not cancelled')

    future = coroutine()
    accepted = []
    wake_up.race(lambda: accepted.append(future.cancel()))
    io_loop.call_later(5, io_loop.stop)
    io_loop.start()
    assert accepted == [True]
    return trace, future


def _woken_outcome(wake_up_name):
    if wake_up_name == 'a multi':
        return ('woken', ['woken', 'too'])
    return ('woken', None if wake_up_name == 'a timer' else 'woken')


@pytest.mark.parametrize('next_wait', sorted(NEXT_WAITS))
@pytest.mark.parametrize('wake_up_name', sorted(WAKE_UPS))
def test_a_cancel_racing_a_wake_up_comes_at_the_next_wait(vloop, wake_up_name, next_wait):
    trace, future = _race(vloop, wake_up_name, next_wait)
    if wake_up_name in ('a moment', 'a None yield'):
        # Nothing to deliver: the CancelledError comes in at the moment itself.
        assert trace == ['cancelled at the wake-up']
    else:
        assert trace == [_woken_outcome(wake_up_name), 'cancelled at the next wait']
    assert future.cancelled()


@pytest.mark.parametrize('wake_up_name', sorted(set(WAKE_UPS) - {'a moment', 'a None yield'}))
def test_a_coroutine_returning_after_the_race_ends_with_its_value(vloop, wake_up_name):
    # It never waits again: its value is not lost, and it ends.
    trace, future = _race(vloop, wake_up_name)
    assert trace == [_woken_outcome(wake_up_name)]
    assert future.result() == 'returned'


def test_a_cancel_delivered_is_not_delivered_again(vloop):
    # The coroutine catches the CancelledError and waits to clean up: that wait is its own.
    trace = []

    @gen.coroutine
    def cleans_up():
        try:
            yield Future()
        except CancelledError:
            trace.append('cancelled')
        yield gen.sleep(1)
        trace.append('cleaned up')
        raise gen.Return('done')

    future = cleans_up()
    vloop.add_callback(future.cancel)
    assert vloop.run_sync(lambda: future, timeout=5) == 'done'
    assert trace == ['cancelled', 'cleaned up']


def _open_descriptors():
    return len(os.listdir('/proc/self/fd'))


def _ended(future):
    """A Future resolved with None once `future` is done, however it ended."""
    ended = Future()
    future.add_done_callback(lambda _: ended.set_result(None))
    return ended


@pytest.fixture
def silent_port():
    """A listening socket that never accepts: the kernel completes the connections and
    nothing ever answers."""
    listener = socket.socket()
    listener.bind(('127.0.0.1', 0))
    listener.listen(1024)
    yield listener.getsockname()[1]
    listener.close()


@pytest.mark.skipif(not os.path.isdir('/proc/self/fd'), reason='counts /proc/self/fd')
def test_a_fetch_cancelled_as_its_connection_completes_frees_its_slot_and_socket(
        io_loop, silent_port):
    client = AsyncHTTPClient(force_instance=True, max_clients=1)
    connect = client.tcp_client.connect
    fetches = []

    def connect_then_race(*args, **kwargs):
        connecting = connect(*args, **kwargs)
        # First among its callbacks: the fetch is cancelled (as with_timeout's timer does
        # it) in the pass the connection completes, before the fetch has resumed.
        connecting.add_done_callback(lambda _: fetches[0].cancel())
        return connecting

    client.tcp_client.connect = connect_then_race
    before = _open_descriptors()
    try:
        fetches.append(client.fetch('http://127.0.0.1:%d/' % silent_port))
        io_loop.run_sync(lambda: _ended(fetches[0]), timeout=5)
        assert fetches[0].cancelled()
        assert client._pool.active == 0
        assert _open_descriptors() == before
    finally:
        client.close()


@pytest.mark.skipif(not os.path.isdir('/proc/self/fd'), reason='counts /proc/self/fd')
def test_a_storm_of_fetches_timing_out_leaves_no_slot_or_socket_held(io_loop, silent_port):
    # benchmarks/timeouts.py's storm, small: the deadlines spread over 50 ms, so that
    # fetches are connecting when theirs come. The race above happens a few times in it.
    client = AsyncHTTPClient(force_instance=True, max_clients=10)
    url = 'http://127.0.0.1:%d/' % silent_port
    rng = random.Random(28)
    timed_out = []
    before = _open_descriptors()

    @gen.coroutine
    def fetch(deadline):
        try:
            yield gen.with_timeout(deadline, client.fetch(url))
        except gen.TimeoutError:
            timed_out.append(deadline)

    @gen.coroutine
    def storm():
        start = io_loop.time() + 0.2
        yield [fetch(start + rng.uniform(0, 0.05)) for _ in range(200)]
        yield gen.sleep(0.1)  # the cancelled fetches' coroutines end, their sockets close

    try:
        io_loop.run_sync(storm, timeout=30)
        assert len(timed_out) == 200
        assert client._pool.active == 0
        assert _open_descriptors() == before
    finally:
        client.close()
