"""What `gen.coroutine` gives back, as an object: with the C wrapper and with the pure-Python
one (the `wrapper_kind` fixture runs each test with both), it must pass for the decorated
function (name, signature, binding, pickling) and lose or leak nothing."""
from __future__ import absolute_import, division, print_function

import functools
import gc
import inspect
import pickle
import sys
import traceback
import weakref

import pytest

from tinytornado import gen
from tinytornado._kernel import done_future
from tinytornado.concurrent import Future

pytestmark = pytest.mark.usefixtures('wrapper_kind')


@gen.coroutine
def module_level(x, y=2):
    """Its docstring."""
    raise gen.Return(x + y)


def test_it_looks_like_the_function_it_decorates(wrapper_kind):
    @gen.coroutine
    def adder(a, b=1, *rest, **options):
        """Adds."""
        raise gen.Return(a + b)

    assert adder.__name__ == 'adder'
    assert adder.__doc__ == 'Adds.'
    assert adder.__module__ == __name__
    assert adder.__wrapped__.__name__ == 'adder'
    if sys.version_info >= (3, 3):
        assert adder.__qualname__.endswith('<locals>.adder')
        assert str(inspect.signature(adder)) == '(a, b=1, *rest, **options)'
    assert gen.is_coroutine_function(adder)
    # No __func__, as a function has none: our pytest plugin (as pytest for staticmethod)
    # unwraps through it, and would then run the bare generator.
    assert not hasattr(adder, '__func__')
    assert 'adder' in repr(adder)
    assert callable(adder)
    if wrapper_kind == 'c':
        assert type(adder).__name__ == 'CoroutineFunction'


def test_it_binds_as_a_method_classmethod_and_staticmethod(io_loop):
    class Counter(object):
        total = 10

        def __init__(self):
            self.count = 0

        @gen.coroutine
        def add(self, n):
            yield gen.moment
            self.count += n
            raise gen.Return(self.count)

        @classmethod
        @gen.coroutine
        def class_total(cls, n):
            raise gen.Return(cls.total + n)

        @staticmethod
        @gen.coroutine
        def double(n):
            raise gen.Return(2 * n)

    counter = Counter()
    assert io_loop.run_sync(lambda: counter.add(3)) == 3
    assert io_loop.run_sync(lambda: Counter.add(counter, 4)) == 7
    bound = counter.add
    assert bound.__self__ is counter
    assert io_loop.run_sync(lambda: bound(n=1)) == 8
    assert Counter.class_total(5).result() == 15
    assert counter.class_total(1).result() == 11
    assert Counter.double(4).result() == 8
    assert counter.double(5).result() == 10


def test_each_way_of_ending_gives_its_value(io_loop):
    @gen.coroutine
    def plain(x):
        return x

    @gen.coroutine
    def raises_return():
        raise gen.Return()

    @gen.coroutine
    def raises_return_many():
        raise gen.Return(1, 2)

    @gen.coroutine
    def ends_at_once():
        if False:
            yield  # A generator that never yields.

    @gen.coroutine
    def raises_stop_iteration():
        raise StopIteration(7)  # Not a generator: PEP 479 does not apply.

    assert plain(5).result() == 5
    assert plain(None).result() is None
    assert raises_return().result() is None
    assert raises_return_many().result() == 1
    assert ends_at_once().result() is None
    assert raises_stop_iteration().result() == 7
    for future in (plain(1), raises_return(), ends_at_once(), raises_stop_iteration()):
        assert future.done() and future.exc_info() is None
        # Made as concurrent makes done Futures: the C wrapper sets the fields it is told
        # to, all of them and no other, or gen's Runner would misread them.
        assert type(future) is Future
        assert vars(future) == vars(done_future(future.result()))
        seen = []
        future.add_done_callback(seen.append)  # A done Future calls back at once.
        assert seen == [future]


def test_an_exception_fails_the_future_with_its_traceback():
    def innermost():
        raise ValueError('deep')

    @gen.coroutine
    def fails_before_yield():
        innermost()
        yield gen.moment

    future = fails_before_yield()
    assert future.done()
    exc_info = future.exc_info()
    assert exc_info[0] is ValueError and str(exc_info[1]) == 'deep'
    names = [entry[2] for entry in traceback.extract_tb(exc_info[2])]
    assert names[-2:] == ['fails_before_yield', 'innermost']
    with pytest.raises(ValueError):
        future.result()


def test_bad_arguments_fail_the_future_not_the_call():
    @gen.coroutine
    def one(x):
        raise gen.Return(x)

    future = one(1, 2)
    assert isinstance(future, Future)
    with pytest.raises(TypeError):
        future.result()
    future = one(y=3)
    with pytest.raises(TypeError):
        future.result()


def test_a_base_exception_that_is_no_exception_leaves_the_call():
    @gen.coroutine
    def interrupted():
        raise KeyboardInterrupt()

    @gen.coroutine
    def interrupted_in_generator():
        raise KeyboardInterrupt()
        yield  # A generator.

    with pytest.raises(KeyboardInterrupt):
        interrupted()
    with pytest.raises(KeyboardInterrupt):
        interrupted_in_generator()


def test_a_module_level_coroutine_pickles_by_name():
    assert pickle.loads(pickle.dumps(module_level)) is module_level
    assert module_level(1).result() == 3
    assert module_level(1, y=5).result() == 6


def test_it_has_a_dict_and_can_be_weakly_referenced():
    @gen.coroutine
    def f():
        raise gen.Return(1)

    f.note = 'kept'
    assert f.__dict__['note'] == 'kept'
    reference = weakref.ref(f)
    assert reference() is f
    del f
    gc.collect()
    assert reference() is None


def _self_calling_coroutine():
    """A weak reference to a coroutine function that only a reference cycle keeps."""
    namespace = {}

    @gen.coroutine
    def calls_itself(n):
        if n:
            result = yield namespace['calls_itself'](n - 1)
            raise gen.Return(result + 1)
        raise gen.Return(0)

    namespace['calls_itself'] = calls_itself  # wrapper -> func -> closure -> namespace.
    assert calls_itself(3).result() == 3
    return weakref.ref(calls_itself)


def test_a_cycle_through_the_wrapper_is_collected():
    reference = _self_calling_coroutine()
    gc.collect()
    assert reference() is None


class _Token(object):
    """An argument or result whose lifetime is watched."""


def test_calls_keep_no_reference_to_arguments_results_or_futures(io_loop):
    @gen.coroutine
    def returns(token):
        raise gen.Return(token)

    @gen.coroutine
    def plain(token):
        return token

    @gen.coroutine
    def fails(token):
        raise ValueError(token)

    @gen.coroutine
    def waits(token):
        yield gen.moment
        raise gen.Return(token)

    @gen.coroutine
    def bad_call(token):
        return token

    watched = []

    def call_and_watch(coroutine_function, *args, **kwargs):
        token = _Token()
        future = coroutine_function(token, *args, **kwargs)
        watched.append(weakref.ref(token))
        watched.append(weakref.ref(future))
        return future

    for _ in range(3):
        assert isinstance(call_and_watch(returns).result(), _Token)
        assert isinstance(call_and_watch(plain).result(), _Token)
        with pytest.raises(ValueError):
            call_and_watch(fails).result()
        future = call_and_watch(waits)
        io_loop.run_sync(functools.partial(gen.maybe_future, future))
        with pytest.raises(TypeError):
            call_and_watch(bad_call, 'extra').result()
        assert isinstance(call_and_watch(bad_call).result(), _Token)
    del future
    gc.collect()
    assert [reference() for reference in watched if reference() is not None] == []


def test_a_bad_first_yield_fails_the_future_not_the_call():
    @gen.coroutine
    def yields_a_string():
        yield 'not a future'

    future = yields_a_string()
    with pytest.raises(gen.BadYieldError):
        future.result()


class _NoRunner(object):
    def __init__(self):
        raise AssertionError('a Runner was made')


def test_done_futures_yielded_are_taken_without_a_runner(io_loop, monkeypatch):
    # More yields than the recursion limit allows frames: the results are taken in a loop.
    count = sys.getrecursionlimit() * 3

    @gen.coroutine
    def sums(n):
        total = 0
        for i in range(n):
            total += yield done_future(i)
        raise gen.Return(total)

    @gen.coroutine
    def returns_plainly():
        first = yield done_future('a')
        second = yield sums(3)  # A coroutine that ended already gives a done Future.
        raise gen.Return((first, second))

    @gen.coroutine
    def fails_after_a_yield():
        yield done_future(1)
        raise ValueError('after')

    monkeypatch.setattr(gen, 'Runner', _NoRunner)
    future = sums(count)
    assert future.done() and future.result() == count * (count - 1) // 2
    assert type(future) is Future and vars(future) == vars(done_future(future.result()))
    assert returns_plainly().result() == ('a', 3)
    future = fails_after_a_yield()
    with pytest.raises(ValueError):
        future.result()
    names = [entry[2] for entry in traceback.extract_tb(future.exc_info()[2])]
    assert names[-1] == 'fails_after_a_yield'


def test_after_done_futures_anything_else_goes_to_the_runner(io_loop):
    failed = Future()
    failed.set_exception(KeyError('thrown'))
    cancelled = Future()
    cancelled.cancel()
    steps = []

    @gen.coroutine
    def mixed():
        steps.append((yield done_future(1)))
        try:
            yield failed  # Thrown in at this yield, by the Runner.
        except KeyError as e:
            steps.append(e.args[0])
        steps.append((yield [done_future(2), done_future(3)]))
        yield gen.moment
        steps.append((yield done_future(4)))
        try:
            yield cancelled
        except gen.CancelledError:
            steps.append('cancelled')
        raise gen.Return('end')

    @gen.coroutine
    def gives_up_a_pass():
        steps.append((yield done_future(5)))
        yield gen.moment
        steps.append('resumed')

    future = mixed()
    assert not future.done()  # It waits for the moment: the loop's next pass.
    assert steps == [1, 'thrown', [2, 3]]
    assert io_loop.run_sync(lambda: future) == 'end'
    assert steps == [1, 'thrown', [2, 3], 4, 'cancelled']
    del steps[:]
    future = gives_up_a_pass()
    assert steps == [5] and not future.done()
    io_loop.run_sync(lambda: future)
    assert steps == [5, 'resumed']


def test_done_futures_taken_keep_no_reference(io_loop):
    @gen.coroutine
    def takes(waited):
        value = yield waited
        raise gen.Return(value)

    watched = []
    for _ in range(3):
        token = _Token()
        waited = done_future(token)
        future = takes(waited)
        assert future.result() is token
        watched.extend(weakref.ref(each) for each in (token, waited, future))
    del token, waited, future
    gc.collect()
    assert [reference() for reference in watched if reference() is not None] == []
