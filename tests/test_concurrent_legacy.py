"""Tornado 5.1's executor and legacy callback= APIs: run_on_executor, return_future,
IOLoop.run_in_executor / set_default_executor, DummyExecutor, and concurrent.futures
Futures handed to the loop. Real thread pools; threads meet on Events, never sleep."""
from __future__ import absolute_import, division, print_function

import multiprocessing
import os
import threading
import traceback
import warnings

import pytest

from tinytornado import gen
from tinytornado._compat import PY2, futures, get_ident
from tinytornado.concurrent import (
    Future, InvalidStateError, ReturnValueIgnoredError, dummy_executor, return_future,
    run_on_executor,
)
from tinytornado.ioloop import IOLoop

# How long a worker waits for the other side of a handshake before the test fails.
HANDSHAKE_SECONDS = 10


def raise_in_worker():
    raise ValueError('in the worker')


def worker_ident(value=None):
    return value, get_ident()


def hold(started, release):
    started.set()
    assert release.wait(HANDSHAKE_SECONDS)


def legacy(fn):
    """`return_future(fn)`, checking the decorator's DeprecationWarning."""
    with pytest.warns(DeprecationWarning):
        return return_future(fn)


def this_file():
    return os.path.splitext(os.path.abspath(__file__))[0]


def caller_file(caught):
    """Where the (only) warning caught says it comes from, without extension."""
    assert len(caught) == 1
    return os.path.splitext(os.path.abspath(caught[0].filename))[0]


def frame_names(tb):
    return [entry[2] for entry in traceback.extract_tb(tb)]


class Worker(object):
    """Methods run on a one-thread pool, as 5.1's tests write them."""

    def __init__(self):
        self.executor = futures.ThreadPoolExecutor(1)
        self.__private_pool = self.executor

    @run_on_executor
    def bare(self, value, extra=0):
        return worker_ident(value + extra)

    @run_on_executor()
    def called(self, value):
        return worker_ident(value)

    @run_on_executor(executor='_Worker__private_pool')
    def named(self, value):
        return worker_ident(value)

    @run_on_executor(executor='executor', io_loop='io_loop')
    def old_style(self, value):
        return worker_ident(value)

    @run_on_executor
    def fails(self):
        raise_in_worker()


@pytest.fixture
def worker():
    worker = Worker()
    yield worker
    worker.executor.shutdown()


# -- run_on_executor ----------------------------------------------------------------------

def test_run_on_executor_runs_on_the_pool_and_resolves_on_the_loop(io_loop, worker):
    resolved_on = []
    for method in (worker.bare, worker.called, worker.named, worker.old_style):
        future = method(5)
        assert isinstance(future, Future)
        future.add_done_callback(lambda f: resolved_on.append(get_ident()))
        value, ran_on = yield future
        assert value == 5 and ran_on != get_ident()
    assert resolved_on == [get_ident()] * 4


def test_run_on_executor_passes_arguments_through(io_loop, worker):
    value, _ = yield worker.bare(1, extra=2)
    assert value == 3


def test_run_on_executor_failure_keeps_the_worker_traceback(io_loop, worker):
    with pytest.raises(ValueError) as info:
        yield worker.fails()
    assert 'raise_in_worker' in frame_names(info.tb)


def test_run_on_executor_with_dummy_executor(io_loop):
    class Inline(object):
        executor = dummy_executor

        @run_on_executor
        def where(self):
            return get_ident()
    assert (yield Inline().where()) == get_ident()


def test_run_on_executor_callback_is_called_on_the_loop_and_future_returned(io_loop, worker):
    called = Future()

    def callback(result):
        called.set_result((result[0], get_ident()))
    with pytest.warns(DeprecationWarning) as caught:
        future = worker.bare(20, extra=1, callback=callback)
    assert caller_file(caught) == this_file(), 'the warning names the calling line'
    assert isinstance(future, Future)
    assert (yield called) == (21, get_ident())
    assert future.result()[0] == 21


def test_run_on_executor_rejects_bad_decorator_arguments():
    def method(self):
        pass
    with pytest.raises(ValueError):
        run_on_executor(method, executor='pool')
    with pytest.raises(ValueError):
        run_on_executor(method, method)
    with pytest.raises(TypeError) as info:
        run_on_executor(pool='pool')
    assert 'pool' in str(info.value)


# -- IOLoop.run_in_executor ---------------------------------------------------------------

def test_run_in_executor_default_pool_runs_calls_side_by_side(io_loop):
    # Each call waits for the other: one thread would deadlock (5.1's own test).
    def meet(mine, other):
        mine.set()
        assert other.wait(HANDSHAKE_SECONDS)
        return mine
    first, second = threading.Event(), threading.Event()
    results = yield [io_loop.run_in_executor(None, meet, first, second),
                     io_loop.run_in_executor(None, meet, second, first)]
    assert results == [first, second]


def test_run_in_executor_resolves_on_the_loop_thread(io_loop):
    resolved_on = []
    with futures.ThreadPoolExecutor(1) as pool:
        future = io_loop.run_in_executor(pool, worker_ident, 'x')
        future.add_done_callback(lambda f: resolved_on.append(get_ident()))
        value, ran_on = yield future
    assert value == 'x' and ran_on != get_ident()
    assert resolved_on == [get_ident()]


def test_run_in_executor_failure_keeps_the_worker_traceback(io_loop):
    with pytest.raises(ValueError) as info:
        yield io_loop.run_in_executor(None, raise_in_worker)
    assert 'raise_in_worker' in frame_names(info.tb)


def test_default_pool_has_five_threads_a_cpu(io_loop):
    yield io_loop.run_in_executor(None, int)
    assert io_loop._own_executor._max_workers == multiprocessing.cpu_count() * 5


def test_set_default_executor_is_used_for_none(io_loop):
    class CountingExecutor(futures.ThreadPoolExecutor):
        def __init__(self):
            super(CountingExecutor, self).__init__(1)
            self.submitted = []

        def submit(self, fn, *args):  # No **kwargs: run_in_executor passes none.
            self.submitted.append(args)
            return super(CountingExecutor, self).submit(fn, *args)
    executor = CountingExecutor()
    io_loop.set_default_executor(executor)
    assert (yield io_loop.run_in_executor(None, int, '7')) == 7
    executor.shutdown()
    assert executor.submitted == [('7',)]


def test_set_default_executor_rejects_what_is_not_an_executor(io_loop):
    for bad in (None, object()):
        with pytest.raises(TypeError):
            io_loop.set_default_executor(bad)


def test_cancelling_before_the_call_starts_cancels_the_call(io_loop):
    started, release = threading.Event(), threading.Event()
    ran = []
    with futures.ThreadPoolExecutor(1) as pool:
        holder = io_loop.run_in_executor(pool, hold, started, release)
        assert started.wait(HANDSHAKE_SECONDS)
        queued = io_loop.run_in_executor(pool, ran.append, 'queued')
        assert queued.cancel() is True
        assert queued.cancelled()
        release.set()
        yield holder
    assert ran == []


def test_close_shuts_down_only_the_pool_the_loop_made(io_loop_class):
    loop = io_loop_class(make_current=False)
    own_thread = loop.run_sync(lambda: loop.run_in_executor(None, threading.current_thread))
    with futures.ThreadPoolExecutor(1) as pool:
        loop.set_default_executor(pool)
        assert loop.run_sync(lambda: loop.run_in_executor(None, int, '4')) == 4
        assert own_thread.is_alive()
        loop.close()
        assert not own_thread.is_alive(), 'close() shuts the pool down and waits for it'
        assert pool.submit(int, '5').result() == 5, "the user's executor stays usable"


# -- return_future ------------------------------------------------------------------------

@pytest.fixture
def calls_back_now():
    return legacy(lambda value, callback: callback(value * 2))


@pytest.fixture
def calls_back_later():
    def later(value, callback):
        IOLoop.current().add_callback(callback, value * 2)
    return legacy(later)


def test_return_future_resolves_at_once_when_called_back_at_once(calls_back_now):
    assert calls_back_now(21).result() == 42


def test_return_future_resolves_through_the_loop(io_loop, calls_back_later):
    future = calls_back_later(21)
    assert not future.done()
    assert (yield future) == 42


def test_return_future_caller_callback_by_keyword_or_position(calls_back_now):
    trace = []
    with pytest.warns(DeprecationWarning) as caught:
        future = calls_back_now(1, callback=trace.append)
    assert caller_file(caught) == this_file(), 'the warning names the calling line'
    with pytest.warns(DeprecationWarning):
        calls_back_now(2, trace.append)
    assert trace == [2, 4], 'called back before returning: the callbacks ran at once'
    assert future.result() == 2


def test_return_future_caller_callback_runs_on_the_loop_later(io_loop, calls_back_later):
    trace = []
    called = Future()

    def callback(result):
        trace.append(('callback', result, get_ident()))
        called.set_result(None)
    with pytest.warns(DeprecationWarning):
        calls_back_later(5, callback=callback)
    trace.append('returned')
    yield called
    assert trace == ['returned', ('callback', 10, get_ident())]


def test_return_future_none_callback_is_no_callback(calls_back_now):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        assert calls_back_now(1, callback=None).result() == 2
        assert calls_back_now(1, None).result() == 2
    assert caught == []


def test_return_future_callback_only_in_kwargs():
    reported = legacy(lambda **kwargs: kwargs['callback'](kwargs['value']))
    assert reported(value=3).result() == 3


def test_return_future_on_a_method_takes_the_callback_positionally():
    class Holder(object):
        factor = 3

        def scale(self, value, callback):
            callback(value * self.factor)
        scale = legacy(scale)
    trace = []
    with pytest.warns(DeprecationWarning):
        future = Holder().scale(2, trace.append)
    assert future.result() == 6 and trace == [6]


def test_return_future_called_back_without_a_value():
    reported = legacy(lambda callback: callback())
    trace = []
    with pytest.warns(DeprecationWarning):
        future = reported(callback=lambda *args: trace.append(args))
    assert future.result() is None
    assert trace == [()], "the caller's callback gets no argument either"


def test_return_future_synchronous_failure_is_raised_and_callback_never_runs(io_loop):
    def fails(callback):
        raise_in_worker()
    fails = legacy(fails)
    trace = []
    with pytest.raises(ValueError):
        fails(callback=trace.append)
    yield gen.moment
    assert trace == []


def test_return_future_failure_after_calling_back_still_reaches_the_caller():
    def calls_back_then_fails(callback):
        callback(1)
        raise_in_worker()
    with pytest.raises(ValueError):
        legacy(calls_back_then_fails)()


def test_return_future_rejects_a_returned_value():
    returns = legacy(lambda callback: 42)
    with pytest.raises(ReturnValueIgnoredError):
        returns()

    def calls_back_and_returns(callback):
        callback(1)
        return 2
    with pytest.raises(ReturnValueIgnoredError):
        legacy(calls_back_and_returns)()


def test_return_future_calling_back_twice_is_an_error():
    def twice(callback):
        callback(1)
        callback(2)
    with pytest.raises(InvalidStateError):
        legacy(twice)()


def test_return_future_caller_callback_error_is_logged_by_the_loop(
        io_loop, calls_back_later, app_log_records):
    def broken(result):
        raise ZeroDivisionError('in the caller callback')
    with pytest.warns(DeprecationWarning):
        future = calls_back_later(1, callback=broken)
    yield future
    yield gen.moment  # The callback runs in the pass after the Future resolves.
    assert [type(r.exc_info[1]) for r in app_log_records] == [ZeroDivisionError]


def test_return_future_caller_callback_error_when_called_back_at_once_is_raised(
        calls_back_now):
    def broken(result):
        raise ZeroDivisionError('in the caller callback')
    with pytest.raises(ZeroDivisionError):
        with pytest.warns(DeprecationWarning):
            calls_back_now(1, callback=broken)


def test_return_future_cancelled_future_skips_the_caller_callback(io_loop, calls_back_later):
    trace = []
    with pytest.warns(DeprecationWarning):
        future = calls_back_later(1, callback=trace.append)
    future.cancel()
    yield gen.moment
    yield gen.moment
    assert trace == []


# -- concurrent.futures Futures on the loop -----------------------------------------------

def test_yielding_a_concurrent_future_resumes_on_the_loop(io_loop):
    with futures.ThreadPoolExecutor(1) as pool:
        value, ran_on = yield pool.submit(worker_ident, 'v')
    assert value == 'v' and ran_on != get_ident()


def test_add_future_with_a_concurrent_future(io_loop):
    done = Future()
    with futures.ThreadPoolExecutor(1) as pool:
        submitted = pool.submit(worker_ident)
        io_loop.add_future(submitted, lambda f: done.set_result((f, get_ident())))
        handed, called_on = yield done
    assert handed is submitted and called_on == get_ident()


def test_dummy_executor_runs_at_once():
    assert dummy_executor.submit(worker_ident, 1).result() == (1, get_ident())
    with pytest.raises(ValueError) as info:
        dummy_executor.submit(raise_in_worker).result()
    assert 'raise_in_worker' in frame_names(info.tb)
    dummy_executor.shutdown()


if not PY2:  # ``await`` on these Futures: cases 2.7 cannot parse.
    pytest.register_assert_rewrite('concurrent_legacy_cases_py3')
    from concurrent_legacy_cases_py3 import *  # noqa: E402,F401,F403
