"""A coroutine that fails or is cancelled leaves no reference cycle: its locals go when its
Future does, without the garbage collector (issue 28, item 3).

Each test runs 1,000 coroutines with the collector off, each holding a token, and counts
the tokens still alive once their Futures are dropped, then what the collector finds. Both
wrappers run each test (the `wrapper_kind` fixture: C and pure-Python, as with
TINYTORNADO_EXTENSION=0); the file is meant for 2.7, 3.11 and 3.13, where ended frames
keep their callers (see gen._clear_settling_frames).

Left as it is, in Tornado and asyncio alike: a frame that keeps a failed Future in a local
(``child = fetch(); yield child``) is in a cycle with that Future's exception, whose
traceback holds the frame. The coroutines here yield what they wait for directly.
"""
from __future__ import absolute_import, division, print_function

import gc
import weakref

import pytest

from tinytornado import gen
from tinytornado.concurrent import Future

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
        if kind == 'fails in a child, resuming its parent in that stack':
            return self.waits_for_a_failing_child(token), None
        if kind == 'cancelled waiting on a child':
            future = self.waits_for_a_waiting_child(token)
            return future, future.cancel
        raise AssertionError(kind)


KINDS = ['fails before its first yield', 'fails after a wait', 'cancelled while waiting',
         'fails in a child, resuming its parent in that stack', 'cancelled waiting on a child']


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


@pytest.mark.parametrize('kind', KINDS)
def test_a_failed_coroutine_frees_its_locals_without_the_collector(io_loop, coroutines,
                                                                   collector_off, kind):
    tokens, futures = [], []
    for _ in range(COROUTINES):
        token = _Token()
        tokens.append(weakref.ref(token))
        future, end = coroutines.start(kind, token)
        futures.append(future)
        if end is not None:
            io_loop.add_callback(end)
    del token, future, end
    io_loop.run_sync(lambda: _all_ended(futures), timeout=10)
    for future in futures:
        assert future.exc_info() is not None  # retrieved: nothing is logged
    del future
    futures = None
    assert sum(1 for token in tokens if token() is not None) == 0
    assert collector_off() == 0
