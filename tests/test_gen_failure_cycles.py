"""A coroutine that fails or is cancelled leaves no reference cycle: its locals go when its
Future does, without the garbage collector (issue 28, item 3).

Each test runs 1,000 coroutines with the collector off, each holding a token, and counts
the tokens still alive once their Futures are dropped, then what the collector finds. Both
wrappers run each test (the `wrapper_kind` fixture: C and pure-Python, as with
TINYTORNADO_EXTENSION=0); the file is meant for 2.7, 3.11 and 3.13, where ended frames
keep their callers (see gen._clear_settling_frames).

The same for a coroutine that catches a failure and ends well: from 3.12 its ended frame
keeps the frames that resumed it as its callers, as they were when they returned (see
_compat.ENDED_FRAMES_KEEP_CALLER), and none of them may name what failed.

Left as it is, in Tornado and asyncio alike: a frame that keeps a failed Future in a local
(``child = fetch(); yield child``) is in a cycle with that Future's exception, whose
traceback holds the frame. The coroutines here yield what they wait for directly.
"""
from __future__ import absolute_import, division, print_function

import functools
import gc
import weakref

import pytest

from tinytornado import gen
from tinytornado._compat import PY2
from tinytornado.concurrent import CancelledError, Future
from tinytornado.ioloop import IOLoop

if not PY2:
    from gen_failure_cycles_cases_py3 import catches_awaiting, driven, fails_awaiting

COROUTINES = 1000


class _Token(object):
    """A coroutine's local, whose lifetime is watched."""


class _Coroutines(object):
    """The coroutines of the tests, decorated with the wrapper of this test's kind (a
    pure-Python wrapper is in a cycle of its own: decorated once, before the count)."""

    def __init__(self):
        self.fails_at_once = gen.coroutine(self._fails_at_once)
        self.fails_after_a_wait = gen.coroutine(self._fails_after_a_wait)
        self.waits_for = gen.coroutine(self._waits_for)
        self.fails_after = gen.coroutine(self._fails_after)
        self.waits_for_a_failing_child = gen.coroutine(self._waits_for_a_failing_child)
        self.waits_for_a_waiting_child = gen.coroutine(self._waits_for_a_waiting_child)
        self.catches = gen.coroutine(self._catches)
        self.fails_on = gen.coroutine(self._fails_on)
        self.catches_after_a_wait = gen.coroutine(self._catches_after_a_wait)

    @staticmethod
    def _fails_at_once(token):
        raise ValueError('before its first yield')

    @staticmethod
    def _fails_after_a_wait(token):
        yield gen.moment
        raise ValueError('after a wait')

    @staticmethod
    def _waits_for(token, waited):
        yield waited

    @staticmethod
    def _fails_after(token, waited):
        yield waited
        raise ValueError('after a wait')

    def _waits_for_a_failing_child(self, token):
        yield self.fails_after(_Token(), gen.moment)

    def _waits_for_a_waiting_child(self, token):
        yield self.waits_for(_Token(), Future())

    # These take what makes the Future they wait for: one named by a local of theirs
    # would be in a cycle with them, as the module's docstring says.
    @staticmethod
    def _catches(token, make_waited):
        try:
            yield make_waited()
        except (ValueError, CancelledError):
            pass

    @staticmethod
    def _fails_on(token, make_waited):
        yield make_waited()

    @staticmethod
    def _catches_after_a_wait(token, make_waited):
        yield gen.moment
        try:
            yield make_waited()
        except ValueError:
            pass

    def start(self, kind, token):
        """A coroutine of `kind` holding `token`, and what ends it (None: it ends by
        itself)."""
        if kind == 'fails before its first yield':
            return self.fails_at_once(token), None
        if kind == 'fails after a wait':
            return self.fails_after_a_wait(token), None
        if kind == 'cancelled while waiting':
            future = self.waits_for(token, Future())
            return future, future.cancel
        if kind == 'fails on a failed Future it yields first, in the stack that started it':
            return self.fails_on(token, _failed), None
        if kind == 'fails in a child, resuming its parent in that stack':
            return self.waits_for_a_failing_child(token), None
        if kind == 'cancelled waiting on a child':
            future = self.waits_for_a_waiting_child(token)
            return future, future.cancel
        if kind == 'catches a child failing in the stack that started it':
            # Tornado 5.1's gen_test test_coroutine_refcounting: the child's first yield is
            # done, so it fails within the parent's call, before the parent first yields.
            child = functools.partial(self.fails_after, token, gen.maybe_future(None))
            return self.catches(token, child), None
        if kind == 'catches a failure that comes later':
            return self.catches(token, _failing_in_the_next_pass), None
        if kind == 'catches a failure done before it is yielded, after a wait':
            return self.catches_after_a_wait(token, _failed), None
        if kind == 'catches its cancellation':
            future = self.catches(token, Future)
            return future, future.cancel
        # async def under gen.drive_awaitable: what is thrown into it, and the Future it
        # came from, must not stay in its frame (nor in Future.__await__'s, or result's).
        if kind == 'async def failing on a Future failed before it is awaited':
            return driven(fails_awaiting(token, _failed)), None
        if kind == 'async def failing on a Future that fails later':
            return driven(fails_awaiting(token, _failing_in_the_next_pass)), None
        if kind == 'async def catching a Future failed before it is awaited':
            return driven(catches_awaiting(token, _failed)), None
        if kind == 'async def catching a Future that fails later':
            return driven(catches_awaiting(token, _failing_in_the_next_pass)), None
        raise AssertionError(kind)


def _failed():
    future = Future()
    future.set_exception(ValueError('failed before it was yielded'))
    return future


def _failing_in_the_next_pass():
    future = Future()
    IOLoop.current().add_callback(future.set_exception, ValueError('failed later'))
    return future


KINDS = ['fails before its first yield', 'fails after a wait', 'cancelled while waiting',
         'fails on a failed Future it yields first, in the stack that started it',
         'fails in a child, resuming its parent in that stack', 'cancelled waiting on a child']
CATCHING_KINDS = ['catches a child failing in the stack that started it',
                  'catches a failure that comes later',
                  'catches a failure done before it is yielded, after a wait',
                  'catches its cancellation']
if not PY2:
    KINDS += ['async def failing on a Future failed before it is awaited',
              'async def failing on a Future that fails later']
    CATCHING_KINDS += ['async def catching a Future failed before it is awaited',
                       'async def catching a Future that fails later']


@pytest.fixture
def coroutines(wrapper_kind):
    return _Coroutines()


@pytest.fixture
def collector_off(coroutines):
    gc.collect()
    gc.disable()
    yield gc.collect
    gc.enable()


def _all_ended(futures):
    ended, remaining = Future(), [len(futures)]

    def count(_):
        remaining[0] -= 1
        if not remaining[0]:
            ended.set_result(None)
    for future in futures:
        future.add_done_callback(count)
    return ended


def _run(io_loop, coroutines, kind, tokens, futures):
    """Run COROUTINES coroutines of `kind` to their end, adding weak references to their
    tokens to `tokens` and their Futures to `futures`."""
    for _ in range(COROUTINES):
        token = _Token()
        tokens.append(weakref.ref(token))
        future, end = coroutines.start(kind, token)
        futures.append(future)
        if end is not None:
            io_loop.add_callback(end)
    del token, future, end
    started = futures  # What the closure reads: a cell for an argument stays a copy on 2.7.
    io_loop.run_sync(lambda: _all_ended(started), timeout=10)
    # A failed coroutine's frame keeps this one among its callers (the loop's frames too,
    # naming that closure): naming the Futures, they would be in a cycle with them.
    started = futures = None


@pytest.mark.parametrize('kind', KINDS)
def test_a_failed_coroutine_frees_its_locals_without_the_collector(io_loop, coroutines,
                                                                   collector_off, kind):
    tokens, futures = [], []
    _run(io_loop, coroutines, kind, tokens, futures)
    for future in futures:
        assert future.exc_info() is not None  # retrieved: nothing is logged
    del future
    futures = None
    assert sum(1 for token in tokens if token() is not None) == 0
    assert collector_off() == 0


@pytest.mark.parametrize('kind', CATCHING_KINDS)
def test_a_coroutine_catching_a_failure_frees_its_locals_without_the_collector(
        io_loop, coroutines, collector_off, kind):
    tokens, futures = [], []
    _run(io_loop, coroutines, kind, tokens, futures)
    assert [future.result() for future in futures] == [None] * COROUTINES
    futures = None
    assert sum(1 for token in tokens if token() is not None) == 0
    assert collector_off() == 0
