"""The Runner, as an object: its fields, and nothing lost or leaked through it. (What a
Runner does for the coroutines it drives is in test_gen.py; the `wrapper_kind` fixture runs
both files with each wrapper, C and pure-Python, which start the same `gen.Runner`.)"""
from __future__ import absolute_import, division, print_function

import functools
import gc
import sys
import threading
import types
import weakref

import pytest

from tinytornado import gen
from tinytornado.concurrent import CancelledError, Future
from tinytornado.ioloop import IOLoop

pytestmark = pytest.mark.usefixtures('wrapper_kind')


class _Token(object):
    """A value whose lifetime is watched."""


def _runner_of(future):
    # A coroutine's Future has its Runner as its canceller while the coroutine runs.
    runner = future._canceller
    assert isinstance(runner, gen.Runner)
    return runner


def test_each_wrapper_starts_a_runner_of_fixed_fields():
    waited = Future()

    @gen.coroutine
    def waits():
        yield waited

    runner = _runner_of(waits())
    assert type(runner) is gen.Runner
    assert not hasattr(runner, '__dict__')  # Its slots: no dict made per coroutine.
    waited.set_result(None)


def test_its_fields_follow_the_coroutine(io_loop):
    waited = Future()

    @gen.coroutine
    def waits():
        yield waited
        yield gen.moment
        raise gen.Return('done')

    future = waits()
    runner = _runner_of(future)
    assert runner.result_future is future
    assert runner.future is waited
    assert runner.io_loop is io_loop
    assert runner.must_cancel is False
    generator = runner.gen
    assert isinstance(generator, types.GeneratorType)
    waited.set_result(None)
    assert io_loop.run_sync(lambda: future) == 'done'
    assert runner.gen is None
    assert generator.gi_frame is None  # Ended, not left suspended.


@gen.coroutine
def _waits_forever(token=None):
    yield Future()


def test_a_waiting_coroutine_nobody_references_is_collected():
    # future -> canceller (the Runner) -> result_future (the future), and the waited
    # Future's callback -> the Runner: only the garbage collector can free these.
    token = _Token()
    reference = weakref.ref(token)
    future = _waits_forever(token)
    generator_reference = weakref.ref(future._canceller.gen)
    del token, future
    gc.collect()
    assert reference() is None
    assert generator_reference() is None


def test_no_way_through_a_runner_keeps_a_reference(io_loop):
    @gen.coroutine
    def chains(token, depth):
        if depth:
            result = yield chains(token, depth - 1)  # Past the depth bound, too.
            raise gen.Return(result)
        yield gen.moment
        raise gen.Return(token)

    @gen.coroutine
    def after_a_future(token):
        waited = Future()
        io_loop.add_callback(waited.set_result, token)
        result = yield waited
        raise gen.Return(result)

    @gen.coroutine
    def after_a_list(token):
        results = yield [chains(token, 0), after_a_future(token)]
        raise gen.Return(results[0])

    @gen.coroutine
    def fails_after_a_wait(token):
        yield gen.moment
        raise ValueError(token)

    @gen.coroutine
    def catches_a_failure(token):
        try:
            yield fails_after_a_wait(token)
        except ValueError as e:
            raise gen.Return(e.args[0])

    @gen.coroutine
    def yields_a_string_after_a_wait(token):
        yield gen.moment
        yield 'not a future'

    watched = []

    def outcome(coroutine_function, *args):
        token = _Token()
        watched.append(weakref.ref(token))
        future = coroutine_function(token, *args)
        watched.append(weakref.ref(future))
        try:
            return io_loop.run_sync(lambda: future)
        except Exception as e:
            return e

    for _ in range(3):
        assert isinstance(outcome(chains, 0), _Token)  # After a moment.
        assert isinstance(outcome(after_a_future), _Token)
        assert isinstance(outcome(after_a_list), _Token)
        assert isinstance(outcome(fails_after_a_wait), ValueError)
        assert isinstance(outcome(catches_a_failure), _Token)
        assert isinstance(outcome(yields_a_string_after_a_wait), gen.BadYieldError)
        assert isinstance(outcome(chains, gen._MAX_RETURN_DEPTH + 5), _Token)
        token = _Token()
        watched.append(weakref.ref(token))
        cancelled = _waits_forever(token)
        watched.append(weakref.ref(cancelled))
        assert cancelled.cancel()
        with pytest.raises(CancelledError):
            io_loop.run_sync(functools.partial(gen.maybe_future, cancelled))
        del token, cancelled
    gc.collect()
    assert [reference() for reference in watched if reference() is not None] == []


def test_a_base_exception_leaves_the_loop_pass_and_the_coroutine_unresolved(io_loop):
    @gen.coroutine
    def interrupted():
        yield gen.moment
        raise KeyboardInterrupt()

    future = interrupted()
    with pytest.raises(KeyboardInterrupt):
        io_loop.run_sync(lambda: future)
    io_loop.run_sync(_a_pass)
    assert not future.done()  # As from the Python wrapper: it was never an outcome.


@gen.coroutine
def _a_pass():
    yield gen.moment


def test_a_base_exception_from_a_parent_resumed_by_a_return_leaves_no_record(io_loop):
    # The parent resumes inside its child's return; what escapes it must leave the
    # record of returning coroutines as it was, holding nothing.
    trace = []
    watched = []

    @gen.coroutine
    def child(name):
        yield gen.moment
        raise gen.Return(name)

    @gen.coroutine
    def interrupted_parent():
        first = child('first')
        watched.append(weakref.ref(first))
        yield first
        raise KeyboardInterrupt()

    @gen.coroutine
    def parent():
        trace.append((yield child('second')))
        io_loop.add_callback(trace.append, 'next pass')

    interrupted_parent()
    with pytest.raises(KeyboardInterrupt):
        io_loop.run_sync(_a_pass)
    io_loop.run_sync(parent)
    io_loop.run_sync(_a_pass)
    assert trace == ['second', 'next pass']
    gc.collect()
    assert watched[0]() is None


def test_loops_in_two_threads_resume_their_returning_coroutines_independently():
    # One record of returning coroutines serves every thread: another thread's entries
    # may cost a resumption a pass, never send a result to the wrong coroutine.
    def chain_in_a_thread(results, name):
        @gen.coroutine
        def level(n):
            yield gen.moment
            if n == 0:
                raise gen.Return(name)
            value = yield level(n - 1)
            raise gen.Return(value)

        @gen.coroutine
        def main():
            values = []
            for _ in range(50):
                values.append((yield level(gen._MAX_RETURN_DEPTH + 3)))
            raise gen.Return(values)
        loop = IOLoop()
        try:
            # A coroutine never resumed fails the test rather than hanging it.
            results[name] = loop.run_sync(main, timeout=60)
        finally:
            loop.close()

    results = {}
    threads = [threading.Thread(target=chain_in_a_thread, args=(results, name))
               for name in ('a', 'b')]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {'a': ['a'] * 50, 'b': ['b'] * 50}


def test_callbacks_of_a_coroutine_that_failed_see_no_exception_being_handled(io_loop):
    @gen.coroutine
    def fails_after_a_wait():
        yield gen.moment
        raise ValueError('failed')

    handled = []
    future = fails_after_a_wait()
    future.add_done_callback(lambda done: handled.append(sys.exc_info()[0]))
    with pytest.raises(ValueError):
        io_loop.run_sync(lambda: future)
    assert handled == [None]
