"""The Runner, as an object: `_speedups.RunnerCore`'s C `run` and `gen._PythonRunner`'s
must look alike from Python and lose or leak nothing. (What a Runner does for the coroutines
it drives is in test_gen.py; the `wrapper_kind` fixture runs both files with each kind: the
C wrapper starts C Runners, the pure-Python one Python Runners.)"""
from __future__ import absolute_import, division, print_function

import functools
import gc
import sys
import weakref

import pytest

from tinytornado import gen
from tinytornado.concurrent import CancelledError, Future

pytestmark = pytest.mark.usefixtures('wrapper_kind')


class _Token(object):
    """A value whose lifetime is watched."""


def _runner_of(future):
    # A coroutine's Future has its Runner as its canceller while the coroutine runs.
    runner = future._canceller
    assert isinstance(runner, gen.Runner)
    return runner


def test_each_wrapper_starts_its_own_kind_of_runner(wrapper_kind):
    waited = Future()

    @gen.coroutine
    def waits():
        yield waited

    runner = _runner_of(waits())
    if wrapper_kind == 'c':
        assert isinstance(runner, gen._speedups.RunnerCore)
    else:
        assert type(runner) is gen._PythonRunner
    assert not hasattr(runner, '__dict__')
    waited.set_result(None)


def test_its_fields_read_alike(io_loop):
    waited = Future()
    seen = {}

    @gen.coroutine
    def waits():
        yield waited
        seen['running'] = runner.running  # While its generator runs.
        raise gen.Return('done')

    future = waits()
    runner = _runner_of(future)
    assert runner.result_future is future
    assert runner.future is waited
    assert runner.io_loop is io_loop
    assert runner.running is False
    assert runner.must_cancel is False
    assert runner.return_depth == 0
    assert runner.gen is not None
    waited.set_result(None)
    assert io_loop.run_sync(lambda: future) == 'done'
    assert seen['running'] is True
    assert runner.gen is None
    assert runner.running is False


def test_run_takes_at_most_the_done_future():
    waited = Future()

    @gen.coroutine
    def waits():
        yield waited

    runner = _runner_of(waits())
    with pytest.raises(TypeError):
        runner.run(waited, 'extra')
    waited.set_result(None)


def test_a_runner_not_set_up_raises_rather_than_crashes(wrapper_kind):
    if wrapper_kind == 'python':
        pytest.skip('a Python Runner not set up fails as Python code does')
    runner_class = type(_runner_of(_waits_forever()))
    runner = runner_class()
    assert runner.gen is None and runner.future is None
    runner.run()  # Ended, as far as it can tell: nothing to do.
    runner.gen = iter(())  # Not ended: run goes on to what is missing.
    with pytest.raises(RuntimeError):
        runner.run()


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


def test_a_base_exception_leaves_the_loop_pass_and_the_runner_stops_running(io_loop):
    @gen.coroutine
    def interrupted():
        yield gen.moment
        raise KeyboardInterrupt()

    future = interrupted()
    runner = _runner_of(future)
    with pytest.raises(KeyboardInterrupt):
        io_loop.run_sync(lambda: future)
    assert runner.running is False
    assert not future.done()  # As from the Python wrapper: it was never an outcome.


class _UnreadableFuture(Future):
    """A Future one of whose fields raises when read (set_result still stores)."""
    unreadable = None

    def __getattribute__(self, name):
        if name == type(self).unreadable:
            raise ValueError('cannot read ' + name)
        return Future.__getattribute__(self, name)


@pytest.mark.parametrize('field', ['_exc_info', '_result'])
def test_an_error_reading_a_done_future_fails_the_coroutine(io_loop, field):
    # run reads them inside its `try`, as the generator's own failure; only _state is not.
    class Unreadable(_UnreadableFuture):
        unreadable = field

    @gen.coroutine
    def waits():
        yield gen.moment
        done = Unreadable()
        done.set_result('never read')
        yield done  # Taken by handle_yield: not exactly a Future.
        raise gen.Return('resumed')

    future = waits()
    runner = _runner_of(future)
    io_loop.run_sync(_a_few_passes)
    assert future.done()
    assert future.exception().args == ('cannot read ' + field,)
    assert runner.gen is None


@gen.coroutine
def _a_few_passes():
    for _ in range(3):
        yield gen.moment


def test_a_generator_its_runner_drops_while_it_runs_stays_alive_until_it_yields(io_loop):
    # The Python run holds `self.gen.send` for the send's length; the C one must hold the
    # generator too, or it is freed under its own running frame.
    seen = []

    @gen.coroutine
    def drops_itself():
        yield gen.moment
        runner.gen = None  # Its Runner held the only other reference.
        seen.append(reference() is not None)
        yield gen.moment

    future = drops_itself()
    runner = _runner_of(future)
    reference = weakref.ref(runner.gen)
    io_loop.run_sync(_a_few_passes)
    assert seen == [True]
    assert reference() is None  # Closed once the send that dropped it was over.
    assert not future.done()


def test_a_returning_runner_reads_its_result_future_after_dropping_its_generator(io_loop):
    # Dropping the generator can run code (here a weakref callback) that changes the
    # Runner's fields: the Python run reads result_future only after `self.gen = None`.
    @gen.coroutine
    def returns():
        yield gen.moment
        raise gen.Return('done')

    future = returns()
    runner = _runner_of(future)
    reference = weakref.ref(runner.gen, lambda _: setattr(runner, 'result_future', None))
    del future  # The Runner holds the only reference.
    with pytest.raises(AttributeError):
        runner.run()  # None._return_depth = ..., as in the Python run.
    assert reference() is None
    assert runner.running is False


def test_a_runner_not_set_up_and_woken_by_a_future_raises_rather_than_crashes(wrapper_kind):
    if wrapper_kind == 'python':
        pytest.skip('a Python Runner not set up fails as Python code does')
    runner = type(_runner_of(_waits_forever()))()
    runner.gen = iter(())
    with pytest.raises(RuntimeError):
        runner.run(Future())  # Not a returning coroutine's: run asks its (missing) loop.


@pytest.mark.parametrize('replacement', [lambda: 5, lambda: iter(())],
                         ids=['not-an-iterator', 'not-a-generator'])
def test_a_gen_that_is_no_generator_fails_the_coroutine_as_its_send_does(io_loop, replacement):
    @gen.coroutine
    def waits():
        yield gen.moment

    future = waits()
    _runner_of(future).gen = replacement()
    io_loop.run_sync(_a_few_passes)
    assert isinstance(future.exception(), AttributeError)  # It has no send().


def test_a_converter_that_gives_no_future_fails_as_the_python_run_does(io_loop):
    # handle_yield takes what the converter gives; the Python run then reads None._state.
    class Thing(object):
        pass

    @gen.convert_yielded.register(Thing)
    def to_nothing(thing):
        return None

    @gen.coroutine
    def yields_a_thing(first):
        yield first  # Past run's first Future: handle_yield is called from its loop.
        yield Thing()

    done = Future()
    done.set_result(None)
    try:
        for first in (Thing(), done):
            with pytest.raises(AttributeError):
                yields_a_thing(first).result()  # From the wrapper's except Exception.
    finally:
        gen._converters.remove((Thing, to_nothing))


def test_run_takes_the_done_future_by_keyword_too(io_loop):
    waited = Future()

    @gen.coroutine
    def waits():
        result = yield waited
        raise gen.Return(result)

    future = waits()
    runner = _runner_of(future)
    with pytest.raises(TypeError):
        runner.run(future=waited)
    with pytest.raises(TypeError):
        runner.run(waited, done=waited)
    waited.set_result('resumed')  # Its run is scheduled on the loop: not a return.
    waited._return_depth = 0  # As if a coroutine returning in this stack had resolved it.
    runner.run(done=waited)
    assert future.result() == 'resumed'


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
