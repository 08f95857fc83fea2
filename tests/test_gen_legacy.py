"""gen's legacy interface, as Tornado 4/5 code uses it: `gen.Task`, `gen.engine` and the
YieldPoints (`Callback`, `Wait`, `WaitAll`, `Multi`/`MultiYieldPoint`) with their errors."""
from __future__ import absolute_import, division, print_function

import sys
import types
import unittest
import warnings

import pytest

from tinytornado import gen
from tinytornado.concurrent import CancelledError, Future
from tinytornado.testing import AsyncTestCase, gen_test

# Each test runs with both of gen.coroutine's wrappers, so with both kinds of Runner; the
# DeprecationWarnings these names give are tested once, below.
pytestmark = [pytest.mark.usefixtures('wrapper_kind'),
              pytest.mark.filterwarnings('ignore::DeprecationWarning')]


def call_back_later(io_loop, *args, **kwargs):
    """A callback-style function: calls ``callback(*args, **kwargs)`` in the next pass."""
    callback = kwargs.pop('callback')
    io_loop.add_callback(lambda: callback(*args, **kwargs))


def run_case(case_class, name):
    """The formatted problems of running test method `name` of an AsyncTestCase."""
    result = unittest.TestResult()
    case_class(name).run(result)
    return [problem for _, problem in result.errors + result.failures]


# -- gen.Task ---------------------------------------------------------------------------

def test_task_gives_what_the_callback_receives(io_loop):
    @gen.coroutine
    def main():
        results = []
        for args, kwargs in [((), {}), ((1,), {}), ((1, 2), {}), ((), {'z': 3}),
                             ((None,), {'error': 'e'})]:
            result = yield gen.Task(call_back_later, io_loop, *args, **kwargs)
            results.append(result)
        raise gen.Return(results)
    assert io_loop.run_sync(main) == [
        None, 1, gen.Arguments((1, 2), {}), gen.Arguments((), {'z': 3}),
        gen.Arguments((None,), {'error': 'e'})]
    several = io_loop.run_sync(lambda: gen.Task(call_back_later, io_loop, 4, 5, z=6))
    assert (several.args, several.kwargs) == ((4, 5), {'z': 6})


def test_task_fails_with_what_its_function_raises_before_calling_back(io_loop):
    def broken(callback):
        raise ZeroDivisionError('early')

    @gen.coroutine
    def main():
        try:
            yield gen.Task(broken)
        except ZeroDivisionError as e:
            raise gen.Return('caught %s' % e)
    assert io_loop.run_sync(main) == 'caught early'


def test_task_raises_what_its_function_raises_after_calling_back():
    def calls_back_then_breaks(callback):
        callback('value')
        raise KeyError('late')
    with pytest.raises(KeyError):
        gen.Task(calls_back_then_breaks)


def test_task_keeps_the_first_result_and_takes_a_late_one_after_cancel():
    callbacks = []
    first = gen.Task(lambda callback: callbacks.append(callback))
    callbacks[0]('one')
    callbacks[0]('two')
    assert first.result() == 'one'
    cancelled = gen.Task(lambda callback: callbacks.append(callback))
    cancelled.cancel()
    callbacks[1]('late')
    assert cancelled.cancelled()


def test_task_of_a_coroutine_gives_what_it_returns(io_loop):
    # gen.Task passes callback=, which a coroutine takes as Tornado 5.1's did: see below.
    @gen.coroutine
    def doubles(x):
        yield gen.moment
        raise gen.Return(x * 2)

    @gen.coroutine
    def returns_at_once():
        raise gen.Return('now')
    assert io_loop.run_sync(lambda: gen.Task(doubles, 21)) == 42
    assert io_loop.run_sync(lambda: gen.Task(returns_at_once)) == 'now'


# -- A coroutine's callback= ------------------------------------------------------------

def test_a_coroutine_given_a_callback_calls_it_with_its_result_a_pass_after_it_ends(
        io_loop):
    trace = []

    @gen.coroutine
    def doubles(x, **options):
        trace.append(('runs', x, options))
        if options.get('wait'):
            yield gen.moment
            trace.append('ends')
        raise gen.Return(x * 2)

    @gen.coroutine
    def main():
        at_once = doubles(1, callback=lambda result: trace.append(('called back', result)))
        trace.append(('returned', at_once.result()))
        waits = doubles(2, wait=True, callback=lambda result: trace.append(
            ('called back', result)))
        trace.append(('waiting', waits.done()))
        yield waits
        trace.append('resumed')
        for _ in range(2):
            yield gen.moment
    io_loop.run_sync(main)
    assert trace == [
        ('runs', 1, {}), ('returned', 2), ('runs', 2, {'wait': True}), ('waiting', False),
        ('called back', 2), 'ends', 'resumed', ('called back', 4)]


def test_a_coroutine_given_a_callback_warns_naming_the_calling_line(io_loop):
    @gen.coroutine
    def returns():
        raise gen.Return(None)

    class Service(object):
        @gen.coroutine
        def method(self, x):
            raise gen.Return(x)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        line = _this_line() + 1
        returns(callback=lambda result: None)
        Service().method(1, callback=lambda result: None)
        returns(**{'callback': None})
    assert [(w.category, w.filename) for w in caught] == [
        (DeprecationWarning, __file__)] * 3
    assert caught[0].lineno == line
    assert 'callback arguments are deprecated' in str(caught[0].message)


def _this_line():
    return sys._getframe(1).f_lineno


def test_a_failing_coroutine_never_calls_its_callback_and_the_loop_logs_why(
        io_loop, app_log_records):
    called = []

    @gen.coroutine
    def fails():
        yield gen.moment
        raise ZeroDivisionError('late')

    future = fails(callback=called.append)
    with pytest.raises(ZeroDivisionError):
        io_loop.run_sync(lambda: future)
    io_loop.run_sync(_a_pass)
    assert called == []
    assert [record.exc_info[0] for record in app_log_records] == [ZeroDivisionError]


@gen.coroutine
def _a_pass():
    yield gen.moment


def test_the_callback_is_taken_from_a_keywords_dict_left_as_it_was(io_loop):
    results = []
    keywords = {'callback': results.append, 'y': 3}

    @gen.coroutine
    def adds(x, y):
        raise gen.Return(x + y)
    future = adds(1, **keywords)
    assert keywords == {'callback': results.append, 'y': 3}
    assert future.result() == 4
    io_loop.run_sync(_a_pass)
    assert results == [4]


def test_a_callback_of_none_is_taken_and_nothing_is_called_back(io_loop):
    @gen.coroutine
    def takes_keywords(**options):
        raise gen.Return(options)
    assert takes_keywords(callback=None, other=1).result() == {'other': 1}


# -- Callback and Wait ------------------------------------------------------------------

def test_wait_gives_what_the_callback_was_called_with(io_loop):
    @gen.coroutine
    def main():
        results = []
        for key, args, kwargs in [('none', (), {}), ('one', (42,), {}),
                                  ((1, 2), ((3, 4),), {}), ('two', (1, 2), {}),
                                  ('kw', (), {'value': 42})]:
            (yield gen.Callback(key))(*args, **kwargs)
            results.append((yield gen.Wait(key)))
        raise gen.Return(results)
    assert io_loop.run_sync(main) == [
        None, 42, (3, 4), gen.Arguments((1, 2), {}), gen.Arguments((), {'value': 42})]


def test_callbacks_called_from_the_loop_in_any_order(io_loop):
    @gen.coroutine
    def main():
        for key in range(3):
            call_back_later(io_loop, key, callback=(yield gen.Callback(key)))
        results = [(yield gen.Wait(1))]
        io_loop.add_callback((yield gen.Callback(3)), 3)
        for key in (0, 3, 2):
            results.append((yield gen.Wait(key)))
        raise gen.Return(results)
    assert io_loop.run_sync(main) == [1, 0, 3, 2]


def test_a_key_may_be_reused_once_waited_for(io_loop):
    @gen.coroutine
    def main():
        results = []
        for value in ('a', 'b'):
            io_loop.add_callback((yield gen.Callback('k')), value)
            results.append((yield gen.Wait('k')))
        raise gen.Return(results)
    assert io_loop.run_sync(main) == ['a', 'b']


def test_wait_all_gives_the_results_in_the_order_of_its_keys(io_loop):
    @gen.coroutine
    def main():
        callbacks = []
        for key in ('k1', 'k2', 'k3'):
            callbacks.append((yield gen.Callback(key)))
        for callback, value in reversed(list(zip(callbacks, ('v1', 'v2', 'v3')))):
            io_loop.add_callback(callback, value)
        results = yield gen.WaitAll(['k3', 'k1', 'k2'])
        raise gen.Return(results)
    assert io_loop.run_sync(main) == ['v3', 'v1', 'v2']


def test_the_callback_resumes_its_coroutine_in_its_own_stack(io_loop):
    trace = []

    def caller(callback):
        callback('v')
        trace.append('callback returned')

    @gen.coroutine
    def waiter():
        io_loop.add_callback(caller, (yield gen.Callback('k')))
        trace.append(('resumed', (yield gen.Wait('k'))))
    io_loop.run_sync(waiter)
    assert trace == [('resumed', 'v'), 'callback returned']


def test_the_first_yieldpoint_takes_a_loop_pass_the_next_none(io_loop):
    trace = []

    @gen.coroutine
    def legacy():
        trace.append('before')
        callback = yield gen.Callback('k')
        trace.append('first started')
        io_loop.add_callback(trace.append, 'next pass')
        callback()
        yield gen.Wait('k')
        trace.append('second done')

    def main():
        io_loop.add_callback(trace.append, 'a pass later')
        return legacy()
    io_loop.run_sync(main)
    assert trace == ['before', 'a pass later', 'first started', 'second done', 'next pass']


def test_key_reuse_and_unknown_keys_raise_at_the_yield(io_loop):
    @gen.coroutine
    def main():
        errors = []
        callback = yield gen.Callback((1, 2))
        try:
            yield gen.Callback((1, 2))
        except gen.KeyReuseError as e:
            errors.append(str(e))
        for unknown in (gen.Wait('other'), gen.WaitAll(['other', (1, 2)])):
            try:
                yield unknown
            except gen.UnknownKeyError as e:
                errors.append(str(e))
        callback('still works')
        errors.append((yield gen.Wait((1, 2))))
        raise gen.Return(errors)
    assert io_loop.run_sync(main) == [
        'key (1, 2) is already pending', "key 'other' is not pending",
        "key 'other' is not pending", 'still works']


def test_a_coroutine_ending_with_a_callback_not_waited_for_fails(io_loop):
    orphans = []

    @gen.coroutine
    def leaks():
        orphans.append((yield gen.Callback('k1')))
        (yield gen.Callback('k2'))()
    with pytest.raises(gen.LeakedCallbackError) as info:
        io_loop.run_sync(leaks)
    assert str(info.value) in ["coroutine ended without waiting for callbacks %r" % (keys,)
                               for keys in (['k1', 'k2'], ['k2', 'k1'])]
    orphans[0]('called after its coroutine ended: harmless')


def test_no_leak_is_reported_once_an_exception_was_thrown_in(io_loop):
    @gen.coroutine
    def main():
        yield gen.Callback('orphaned by the error')
        try:
            yield gen.Wait('unknown')
        except gen.UnknownKeyError:
            pass
        raise gen.Return('returned')
    assert io_loop.run_sync(main) == 'returned'


def test_a_failing_yieldpoint_fails_its_yield_only(io_loop):
    class Broken(gen.YieldPoint):
        def __init__(self, method):
            self.method = method

        def start(self, runner):
            if self.method == 'start':
                raise KeyError('start')

        def is_ready(self):
            if self.method == 'is_ready':
                raise KeyError('is_ready')
            return True

        def get_result(self):
            raise KeyError('get_result')

    @gen.coroutine
    def main():
        errors = []
        for method in ('start', 'is_ready', 'get_result'):
            try:
                yield Broken(method)
            except KeyError as e:
                errors.append(e.args[0])
        raise gen.Return(errors)
    assert io_loop.run_sync(main) == ['start', 'is_ready', 'get_result']


def test_a_yieldpoint_of_its_own_uses_the_runner_api(io_loop):
    class WaitAny(gen.YieldPoint):
        """Yields the first of `keys` whose callback came, and its result."""

        def __init__(self, keys):
            self.keys = keys
            self.runner = None

        def start(self, runner):
            self.runner = runner

        def is_ready(self):
            return any(self.runner.is_ready(key) for key in self.keys)

        def get_result(self):
            key = next(key for key in self.keys if self.runner.is_ready(key))
            return key, self.runner.pop_result(key)

    @gen.coroutine
    def main():
        slow, fast = (yield gen.Callback('slow')), (yield gen.Callback('fast'))
        io_loop.add_callback(fast, 'F')
        io_loop.add_callback(lambda: io_loop.add_callback(slow, 'S'))
        first = yield WaitAny(['slow', 'fast'])
        second = yield WaitAny(['slow'])
        raise gen.Return([first, second])
    assert io_loop.run_sync(main) == [('fast', 'F'), ('slow', 'S')]


def test_cancelling_a_coroutine_waiting_on_a_yieldpoint(io_loop):
    trace = []

    @gen.coroutine
    def waiter(key):
        callback = yield gen.Callback(key)
        trace.append(callback)
        try:
            yield gen.Wait(key)
        except CancelledError:
            trace.append('cancelled')
            raise

    @gen.coroutine
    def main():
        future = waiter('k')
        yield gen.moment
        future.cancel()
        trace[0]('after the cancel: ignored')
        yield gen.moment
        raise gen.Return(future.cancelled())
    assert io_loop.run_sync(main) is True
    assert trace[1:] == ['cancelled']


def test_cancelling_before_the_first_yieldpoint_started(io_loop):
    started = []

    class Recorded(gen.Callback):
        def start(self, runner):
            started.append(self.key)
            gen.Callback.start(self, runner)

    @gen.coroutine
    def waiter():
        yield Recorded('k')

    @gen.coroutine
    def main():
        future = waiter()
        future.cancel()
        yield gen.moment
        raise gen.Return(future.cancelled())
    assert io_loop.run_sync(main) is True
    assert started == []


def test_only_a_coroutine_yielding_a_yieldpoint_gets_its_state(io_loop):
    waited = Future()

    @gen.coroutine
    def modern():
        yield waited

    @gen.coroutine
    def legacy():
        (yield gen.Callback('k'))()
        yield waited
        yield gen.Wait('k')

    futures = [modern(), legacy()]
    runners = [future._canceller for future in futures]  # A running coroutine's Runner.
    assert isinstance(runners[0].gen, types.GeneratorType)
    io_loop.run_sync(lambda: gen.sleep(0))  # The first YieldPoint starts a pass later.
    assert isinstance(runners[1].gen, gen.YieldPointRunner)
    waited.set_result(None)
    io_loop.run_sync(lambda: futures)


# -- Lists and dicts of YieldPoints and Futures, gen.Multi ------------------------------

def test_lists_and_dicts_mix_yieldpoints_and_futures(io_loop):
    @gen.coroutine
    def double(x):
        yield gen.moment
        raise gen.Return(x * 2)

    @gen.coroutine
    def main():
        (yield gen.Callback('k1'))('v1')
        io_loop.add_callback((yield gen.Callback('k2')), 'v2')
        as_list = yield [gen.Wait('k1'), gen.Task(call_back_later, io_loop, 'task'),
                         double(1), gen.maybe_future('done'), None]
        (yield gen.Callback('k3'))('v3')
        as_dict = yield {'wait': gen.Wait('k3'), 'coroutine': double(2),
                         'waits': gen.WaitAll(['k2'])}
        empty = yield gen.Multi([])
        raise gen.Return((as_list, as_dict, empty))
    assert io_loop.run_sync(main) == (
        ['v1', 'task', 2, 'done', None], {'wait': 'v3', 'coroutine': 4, 'waits': ['v2']}, [])


def test_multi_of_futures_is_a_future_and_of_yieldpoints_a_yieldpoint(io_loop):
    of_futures = gen.Multi({'a': gen.Task(call_back_later, io_loop, 'A')})
    assert isinstance(of_futures, Future)
    assert isinstance(gen.Multi([gen.Wait('k')]), gen.MultiYieldPoint)

    @gen.coroutine
    def main():
        (yield gen.Callback('k'))('K')
        results = yield gen.Multi([gen.Task(call_back_later, io_loop, 'T'), gen.Wait('k')])
        raise gen.Return(results)
    assert io_loop.run_sync(main) == ['T', 'K']
    assert io_loop.run_sync(lambda: of_futures) == {'a': 'A'}


def test_multi_yieldpoint_raises_the_first_error_and_logs_the_others(io_loop,
                                                                      app_log_records):
    @gen.coroutine
    def fail(exc):
        yield gen.moment
        raise exc

    @gen.coroutine
    def main(quiet_exceptions):
        (yield gen.Callback('k'))()
        try:
            yield gen.MultiYieldPoint(
                [fail(KeyError('first')), gen.Wait('k'), fail(ValueError('second'))],
                quiet_exceptions=quiet_exceptions)
        except KeyError as e:
            raise gen.Return(e.args[0])
    assert io_loop.run_sync(lambda: main(())) == 'first'
    assert [str(r.exc_info[1]) for r in app_log_records] == ['second']
    assert io_loop.run_sync(lambda: main(ValueError)) == 'first'
    assert len(app_log_records) == 1


def test_yielding_what_is_not_yieldable_is_still_a_bad_yield(io_loop):
    @gen.coroutine
    def main():
        errors = []
        for bad in (42, (1, 2), [gen.Wait('k'), 42]):
            try:
                yield bad
            except gen.BadYieldError:
                errors.append(bad)
        raise gen.Return(len(errors))
    assert io_loop.run_sync(main) == 3


# -- gen.engine -------------------------------------------------------------------------

def test_engine_runs_a_callback_style_generator(io_loop):
    @gen.engine
    def legacy(x, callback):
        io_loop.add_callback((yield gen.Callback('k')), x)
        value = yield gen.Wait('k')
        value += yield gen.Task(call_back_later, io_loop, 1)
        callback(value)
    assert legacy(1, callback=lambda value: None) is None
    assert io_loop.run_sync(lambda: gen.Task(legacy, 41)) == 42


def test_engine_raises_into_its_caller_if_it_ends_before_waiting():
    @gen.engine
    def fails():
        raise ZeroDivisionError()
        yield

    @gen.engine
    def returns_a_value():
        raise gen.Return((1, 2))
        yield

    @gen.engine
    def plain_function_returns_a_value():
        return 42

    @gen.engine
    def returns_none():
        raise gen.Return()
        yield

    with pytest.raises(ZeroDivisionError):
        fails()
    for engine_function in (returns_a_value, plain_function_returns_a_value):
        with pytest.raises(gen.ReturnValueIgnoredError):
            engine_function()
    assert returns_none() is None


def test_engine_reports_a_later_error_as_a_loop_callback_does(io_loop, app_log_records):
    @gen.engine
    def fails():
        yield gen.Task(io_loop.add_callback)
        raise ZeroDivisionError()

    @gen.engine
    def returns_a_value():
        yield gen.Task(io_loop.add_callback)
        raise gen.Return(42)

    @gen.coroutine
    def main():
        fails()
        returns_a_value()
        yield gen.Task(call_back_later, io_loop)
    io_loop.run_sync(main)
    assert [(r.getMessage().split()[:3], type(r.exc_info[1])) for r in app_log_records] \
        == [(['Exception', 'in', 'callback'], ZeroDivisionError),
            (['Exception', 'in', 'callback'], gen.ReturnValueIgnoredError)]


class EngineCase(AsyncTestCase):
    """Tornado-style tests: a gen.engine function runs, the test waits for its stop()."""
    __test__ = False  # Run by test_engine_in_an_async_test_case, with each Runner kind.

    def run_engine(self, func):
        func()
        return self.wait()

    def test_leaked_callback(self):
        @gen.engine
        def leaks():
            yield gen.Callback('k1')
            self.stop()
        self.assertRaises(gen.LeakedCallbackError, self.run_engine, leaks)

    def test_error_after_a_wait(self):
        @gen.engine
        def fails():
            self.io_loop.add_callback((yield gen.Callback('k1')))
            yield gen.Wait('k1')
            1 / 0
        self.assertRaises(ZeroDivisionError, self.run_engine, fails)

    def test_value_returned_after_a_task(self):
        @gen.engine
        def returns():
            yield gen.Task(self.io_loop.add_callback)
            raise gen.Return(42)
        self.assertRaises(gen.ReturnValueIgnoredError, self.run_engine, returns)

    def test_stop_with_a_value(self):
        @gen.engine
        def stops():
            yield gen.Task(self.io_loop.add_callback)
            self.stop(42)
            raise gen.Return()
        self.assertEqual(self.run_engine(stops), 42)

    @gen_test
    def test_yieldpoints_in_a_gen_test(self):
        (yield gen.Callback('k1'))('v1')
        results = yield [gen.Wait('k1'), gen.Task(self.io_loop.add_callback)]
        self.assertEqual(results, ['v1', None])


@pytest.mark.parametrize('name', [name for name in dir(EngineCase)
                                  if name.startswith('test_')])
def test_engine_in_an_async_test_case(name):
    assert run_case(EngineCase, name) == []


def test_a_leak_fails_a_gen_test():
    class Case(AsyncTestCase):
        @gen_test
        def test_leaks(self):
            yield gen.Callback('k')
    problems = run_case(Case, 'test_leaks')
    assert len(problems) == 1 and 'LeakedCallbackError' in problems[0]


# -- Deprecation ------------------------------------------------------------------------

def test_the_legacy_names_warn_and_the_modern_path_does_not(io_loop):
    def legacy_uses():
        gen.Task(lambda callback: callback())
        gen.YieldPoint()
        gen.Callback('k')
        gen.Wait('k')
        gen.WaitAll(['k'])
        gen.MultiYieldPoint([gen.maybe_future(1)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        legacy_uses()
    assert [str(w.message).split()[0] for w in caught] == [
        'gen.Task', 'gen.YieldPoint', 'gen.Callback', 'gen.Wait', 'gen.WaitAll',
        'gen.MultiYieldPoint']
    assert all(w.category is DeprecationWarning and w.filename == __file__ for w in caught)

    @gen.coroutine
    def modern():
        yield [gen.maybe_future(1), gen.moment]
        yield gen.multi({'a': gen.sleep(0)})
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        io_loop.run_sync(modern)
