from __future__ import absolute_import, division, print_function

import datetime
import os
import subprocess
import sys
import textwrap
import traceback

import pytest

import tinytornado
from tinytornado import gen
from tinytornado._compat import futures
from tinytornado.concurrent import CancelledError, Future, TimeoutError
from tinytornado.ioloop import IOLoop

REPO = os.path.dirname(os.path.dirname(os.path.abspath(tinytornado.__file__)))

# Each test runs with both of gen.coroutine's wrappers (C and pure Python).
pytestmark = pytest.mark.usefixtures('wrapper_kind')


# Short names: `vloop` runs on `clock`, a virtual one.
@pytest.fixture
def clock(virtual_clock):
    return virtual_clock


@pytest.fixture
def vloop(io_loop, virtual_clock):
    return io_loop


def test_plain_function_gives_a_done_future():
    @gen.coroutine
    def plain(x):
        return x + 1
    future = plain(1)
    assert future.done() and future.result() == 2
    assert gen.is_coroutine_function(plain)


@pytest.mark.parametrize('waits', [False, True])
def test_arguments_reach_the_coroutine_positional_and_by_keyword(vloop, waits):
    @gen.coroutine
    def describe(a, b=2, *rest, **options):
        if waits:
            yield gen.moment
        raise gen.Return((a, b, rest, options))
    calls = [
        ((1,), {}, (1, 2, (), {})),
        ((1, 3, 4), {}, (1, 3, (4,), {})),
        ((), {'a': 5, 'b': 6}, (5, 6, (), {})),
        ((7,), {'c': 8}, (7, 2, (), {'c': 8})),
    ]
    for args, kwargs, expected in calls:
        assert vloop.run_sync(lambda: describe(*args, **kwargs)) == expected
    with pytest.raises(TypeError):
        describe(1, a=1).result()  # Bad arguments fail the Future, as any early error.


def test_generator_finishing_without_waiting_makes_no_runner(monkeypatch):
    def no_runner(*args):
        raise AssertionError('a Runner was created')
    monkeypatch.setattr(gen, 'Runner', no_runner)

    @gen.coroutine
    def immediate():
        if False:
            yield
        raise gen.Return('now')
    future = immediate()
    assert future.done() and future.result() == 'now'


def test_exception_before_first_yield_goes_in_the_future():
    @gen.coroutine
    def broken():
        raise ValueError('early')
        yield
    with pytest.raises(ValueError):
        broken().result()


def test_runner_goes_on_through_done_futures_in_one_pass(vloop):
    trace = []

    @gen.coroutine
    def many_done():
        for i in range(1000):
            value = yield gen.maybe_future(i)
            assert value == i
        trace.append('coroutine done')

    def first():
        vloop.add_callback(trace.append, 'next pass')
        many_done()
    vloop.add_callback(first)
    vloop.call_later(1, vloop.stop)
    vloop.start()
    assert trace == ['coroutine done', 'next pass']


def test_moment_gives_up_one_pass(vloop):
    trace = []

    @gen.coroutine
    def yielder(name):
        for i in range(3):
            trace.append((name, i))
            yield gen.moment
    vloop.add_callback(yielder, 'a')
    vloop.add_callback(yielder, 'b')
    vloop.call_later(1, vloop.stop)
    vloop.start()
    assert trace == [('a', 0), ('b', 0), ('a', 1), ('b', 1), ('a', 2), ('b', 2)]


def test_returning_coroutine_resumes_its_parent_in_the_same_pass(vloop):
    trace = []

    @gen.coroutine
    def child():
        yield gen.moment
        trace.append('child returns')
        raise gen.Return(1)

    @gen.coroutine
    def parent():
        value = yield child()
        trace.append(('parent resumes', value))

    def first():
        parent()
        vloop.add_callback(lambda: vloop.add_callback(trace.append, 'pass 2 ends'))
    vloop.add_callback(first)
    vloop.call_later(1, vloop.stop)
    vloop.start()
    assert trace == ['child returns', ('parent resumes', 1), 'pass 2 ends']


def test_future_resolved_by_a_coroutine_wakes_its_waiter_a_pass_later(vloop):
    trace = []
    shared = Future()

    @gen.coroutine
    def waiter():
        yield shared
        trace.append('waiter resumes')

    @gen.coroutine
    def resolver():
        yield gen.moment
        shared.set_result(None)
        trace.append('set_result returned')
        yield gen.moment
        trace.append('resolver resumes')

    waiter()
    vloop.run_sync(resolver)
    assert trace == ['set_result returned', 'waiter resumes', 'resolver resumes']


def test_deep_chain_of_returning_coroutines_does_not_overflow_the_stack(vloop):
    # Each level resumes its parent in the same stack up to a bounded depth, and past it
    # through the loop: 3,000 levels are far past the recursion limit otherwise. Each
    # level waits a moment before calling the next, so building the chain recurses not.
    @gen.coroutine
    def level(n):
        yield gen.moment
        if n == 0:
            raise gen.Return(0)
        value = yield level(n - 1)
        raise gen.Return(value + 1)
    assert vloop.run_sync(lambda: level(3000), timeout=60) == 3000


def test_yield_none_is_moment(vloop):
    @gen.coroutine
    def f():
        result = yield None
        raise gen.Return(result)
    assert vloop.run_sync(f) is None


def test_sleep_with_virtual_clock(vloop, clock):
    woke = []

    @gen.coroutine
    def sleeper(delay):
        yield gen.sleep(delay)
        woke.append((delay, clock()))
    vloop.run_sync(lambda: [sleeper(0.3), sleeper(0.1), sleeper(0.2)])
    assert woke == [(0.1, 0.1), (0.2, 0.2), (0.3, 0.3)]


def deepest():
    raise ValueError('from the bottom')


@gen.coroutine
def level3():
    yield gen.moment
    deepest()


@gen.coroutine
def level2():
    yield level3()


@gen.coroutine
def level1():
    yield level2()


def test_exception_propagates_through_three_levels_with_traceback(vloop):
    with pytest.raises(ValueError) as info:
        vloop.run_sync(level1)
    names = [frame[2] for frame in traceback.extract_tb(info.tb)]
    for name in ('level1', 'level2', 'level3', 'deepest'):
        assert name in names


def test_exception_caught_in_parent(vloop):
    @gen.coroutine
    def parent():
        try:
            yield level3()
        except ValueError as e:
            raise gen.Return('caught %s' % e)
    assert vloop.run_sync(parent) == 'caught from the bottom'


@pytest.mark.skipif(sys.version_info < (3, 3), reason='return with a value in a generator is 3.3+')
def test_plain_return_in_generator(vloop):
    namespace = {'gen': gen}
    exec(textwrap.dedent('''
        @gen.coroutine
        def f():
            yield gen.moment
            return 42
    '''), namespace)
    assert vloop.run_sync(namespace['f']) == 42


@gen.coroutine
def delayed_value(x, delay):
    yield gen.sleep(delay)
    raise gen.Return(x)


def test_multi_list_and_dict_and_direct_yield(vloop):
    @gen.coroutine
    def main():
        as_list = yield [delayed_value(1, 0.2), delayed_value(2, 0.1)]
        as_dict = yield {'a': delayed_value('A', 0.1), 'b': delayed_value('B', 0)}
        via_multi = yield gen.multi([delayed_value(3, 0), gen.maybe_future(4)])
        empty = yield []
        raise gen.Return((as_list, as_dict, via_multi, empty))
    assert vloop.run_sync(main) == ([1, 2], {'a': 'A', 'b': 'B'}, [3, 4], [])


def test_multi_raises_first_error_logs_others_respects_quiet(vloop, app_log_records):
    @gen.coroutine
    def fail(exc, delay):
        yield gen.sleep(delay)
        raise exc

    @gen.coroutine
    def main():
        yield gen.multi([fail(KeyError('first'), 0.2), fail(ValueError('second'), 0.1),
                         fail(IndexError('quiet'), 0)], quiet_exceptions=IndexError)
    with pytest.raises(KeyError):
        vloop.run_sync(main)
    logged = [str(r.exc_info[1]) for r in app_log_records]
    assert logged == ['second']


def test_multi_waits_for_all_children(vloop):
    trace = []

    @gen.coroutine
    def slow():
        yield gen.sleep(1)
        trace.append('slow finished')

    @gen.coroutine
    def fast_fail():
        raise KeyError('x')
        yield

    @gen.coroutine
    def main():
        try:
            yield [fast_fail(), slow()]
        except KeyError:
            trace.append('error seen')
    vloop.run_sync(main)
    assert trace == ['slow finished', 'error seen']


def test_with_timeout_cancels_what_timed_out(vloop, clock):
    trace = []

    @gen.coroutine
    def slow():
        try:
            yield gen.sleep(10)
        except CancelledError:
            trace.append(('inner cancelled', clock()))
            raise

    @gen.coroutine
    def main():
        inner = slow()
        try:
            yield gen.with_timeout(datetime.timedelta(seconds=1), inner)
        except TimeoutError:
            trace.append(('timeout', clock()))
        yield gen.moment
        trace.append(('inner', inner.cancelled()))
    vloop.run_sync(main)
    assert trace == [('inner cancelled', 1), ('timeout', 1), ('inner', True)]


def test_with_timeout_leaves_a_bare_future_to_its_producer(vloop, app_log_records):
    # Tornado 4 code resolves such a Future with a plain set_result, late or not: Tornado
    # 5.1's with_timeout cancels nothing, so that never raised.
    answer, failure = Future(), Future()

    @gen.coroutine
    def main():
        for future in (answer, failure):
            with pytest.raises(TimeoutError):
                yield gen.with_timeout(datetime.timedelta(seconds=1), future)
        yield gen.sleep(1)
        answer.set_result('late')
        failure.set_exception(ValueError('late failure'))
    vloop.run_sync(main)
    assert answer.result() == 'late'
    assert [str(r.exc_info[1]) for r in app_log_records] == ['late failure']


def test_with_timeout_deadline_and_leave_running(vloop, clock, app_log_records):
    trace = []

    @gen.coroutine
    def slow():
        yield gen.sleep(2)
        trace.append('inner finished')
        raise ValueError('late failure')

    @gen.coroutine
    def main():
        with pytest.raises(TimeoutError):
            yield gen.with_timeout(vloop.time() + 1, slow(), cancel_on_timeout=False)
        yield gen.sleep(5)
    vloop.run_sync(main)
    assert trace == ['inner finished']
    assert [str(r.exc_info[1]) for r in app_log_records] == ['late failure']


def test_with_timeout_passes_result_and_removes_timer(vloop):
    @gen.coroutine
    def main():
        result = yield gen.with_timeout(datetime.timedelta(seconds=5), gen.sleep(1))
        raise gen.Return(result)
    assert vloop.run_sync(main) is None
    assert vloop.pending_work()[0] == []


def run_and_cancel(vloop, coroutine_function, cancel_at=1.0):
    trace = []
    future = coroutine_function(trace)
    vloop.call_later(cancel_at, future.cancel)
    vloop.call_later(cancel_at + 5, vloop.stop)
    vloop.start()
    return trace, future


@pytest.mark.parametrize('make_wait', [
    lambda: gen.sleep(10),
    lambda: Future(),
    lambda: gen.multi([gen.sleep(10), Future()]),
    lambda: gen.with_timeout(datetime.timedelta(seconds=10), gen.sleep(20)),
], ids=['sleep', 'future', 'multi', 'with_timeout'])
def test_cancellation_at_each_kind_of_wait(vloop, clock, make_wait):
    waited_on = []

    @gen.coroutine
    def waiter(trace):
        wait = make_wait()
        waited_on.append(wait)
        try:
            yield wait
        except CancelledError:
            trace.append(('cancelled', clock()))
            raise
    trace, future = run_and_cancel(vloop, waiter)
    assert trace == [('cancelled', 1.0)]
    assert future.cancelled()
    assert waited_on[0].cancelled()
    assert vloop.pending_work()[0] == []


def test_cancellation_reaches_a_child_coroutine(vloop, clock):
    @gen.coroutine
    def child(trace):
        try:
            yield gen.sleep(10)
        except CancelledError:
            trace.append('child cleanup')
            raise

    @gen.coroutine
    def parent(trace):
        try:
            yield child(trace)
        except CancelledError:
            trace.append('parent cleanup')
            raise
    trace, future = run_and_cancel(vloop, parent)
    assert trace == ['child cleanup', 'parent cleanup']
    assert future.cancelled()


def test_cancellation_while_waiting_a_moment(vloop):
    @gen.coroutine
    def spinner(trace):
        try:
            while True:
                yield gen.moment
        except CancelledError:
            trace.append('stopped spinning')
            raise
    trace = []
    future = spinner(trace)
    # The virtual clock never moves while the spinner keeps a callback ready, so cancel
    # from a callback a few passes later.
    vloop.add_callback(vloop.add_callback, vloop.add_callback, future.cancel)
    vloop.call_later(1, vloop.stop)
    vloop.start()
    assert trace == ['stopped spinning'] and future.cancelled()


def test_coroutine_may_refuse_cancellation(vloop):
    @gen.coroutine
    def stubborn(trace):
        try:
            yield gen.sleep(10)
        except CancelledError:
            trace.append('refused')
        yield gen.sleep(1)
        raise gen.Return('finished anyway')
    trace, future = run_and_cancel(vloop, stubborn)
    assert trace == ['refused']
    assert not future.cancelled() and future.result() == 'finished anyway'


def test_cancelling_finished_coroutine_returns_false(vloop):
    @gen.coroutine
    def quick():
        yield gen.moment
        raise gen.Return(1)
    future = quick()
    vloop.run_sync(lambda: future)
    assert future.cancel() is False and future.result() == 1


def test_bad_yield_names_the_object(vloop):
    @gen.coroutine
    def bad():
        yield 42
    with pytest.raises(gen.BadYieldError) as info:
        vloop.run_sync(bad)
    assert '42' in str(info.value)


def test_bad_yield_of_undecorated_generator_suggests_decorator(vloop):
    def helper():
        yield gen.moment

    @gen.coroutine
    def main():
        yield helper()
    with pytest.raises(gen.BadYieldError) as info:
        vloop.run_sync(main)
    assert 'helper() missing the @gen.coroutine decorator' in str(info.value)


def test_bad_yield_error_can_be_caught_in_coroutine(vloop):
    @gen.coroutine
    def main():
        try:
            yield object()
        except gen.BadYieldError:
            raise gen.Return('caught')
    assert vloop.run_sync(main) == 'caught'


def test_yield_concurrent_future_from_thread_pool(loop_real=None):
    io_loop = IOLoop(make_current=False)
    io_loop.make_current()
    pool = futures.ThreadPoolExecutor(2)
    try:
        @gen.coroutine
        def main():
            a = yield pool.submit(lambda: 'from thread')
            b = yield [pool.submit(pow, 2, 10)]
            raise gen.Return((a, b))
        assert io_loop.run_sync(main, timeout=10) == ('from thread', [1024])
    finally:
        pool.shutdown()
        io_loop.close()
        IOLoop.clear_current()


def test_convert_yielded_register(vloop):
    class Thing(object):
        pass

    @gen.convert_yielded.register(Thing)
    def thing_to_future(thing):
        return gen.maybe_future('converted')

    @gen.coroutine
    def main():
        result = yield Thing()
        raise gen.Return(result)
    try:
        assert vloop.run_sync(main) == 'converted'
    finally:
        gen._converters.remove((Thing, thing_to_future))


def test_wait_iterator_yields_in_finishing_order(vloop):
    @gen.coroutine
    def main():
        seen = []
        waiter = gen.WaitIterator(delayed_value('slow', 0.3), delayed_value('fast', 0.1),
                                  delayed_value('mid', 0.2))
        while not waiter.done():
            result = yield waiter.next()
            seen.append((waiter.current_index, result))
        keyed = gen.WaitIterator(a=delayed_value('A', 0.2), b=delayed_value('B', 0.1))
        while not keyed.done():
            result = yield keyed.next()
            seen.append((keyed.current_index, result))
        raise gen.Return(seen)
    assert vloop.run_sync(main) == [(1, 'fast'), (2, 'mid'), (0, 'slow'), ('b', 'B'), ('a', 'A')]
    with pytest.raises(ValueError):
        gen.WaitIterator(Future(), a=Future())


def test_wait_iterator_gives_futures_already_done_in_the_arguments_order(vloop):
    @gen.coroutine
    def main():
        seen = []
        waiter = gen.WaitIterator(*[gen.maybe_future(i * 10) for i in range(20)])
        while not waiter.done():
            result = yield waiter.next()
            seen.append((waiter.current_index, result))
        raise gen.Return(seen)
    assert vloop.run_sync(main) == [(i, i * 10) for i in range(20)]


def test_maybe_future():
    future = Future()
    assert gen.maybe_future(future) is future
    assert gen.maybe_future(3).result() == 3


def test_cancel_after_the_wait_resolved_delivers_the_outcome_first(vloop):
    trace = []
    acquired = Future()

    @gen.coroutine
    def holder():
        value = yield acquired
        trace.append(('got', value))
        try:
            yield gen.sleep(1)
        except CancelledError:
            trace.append('cancelled at the next wait')
            raise

    future = holder()

    def resolve_then_cancel():
        acquired.set_result('the lock')
        future.cancel()  # Before the coroutine has resumed with the lock.
    vloop.add_callback(resolve_then_cancel)
    vloop.call_later(5, vloop.stop)
    vloop.start()
    assert trace == [('got', 'the lock'), 'cancelled at the next wait']
    assert future.cancelled()


def test_a_coroutine_cancelled_at_a_moment_fails_showing_its_own_frame_only(vloop):
    # The CancelledError comes in at the `yield gen.moment`: its traceback shows where the
    # coroutine was, and nothing of how the Runner made the error.
    @gen.coroutine
    def gives_up_passes():
        while True:
            yield gen.moment

    future = gives_up_passes()
    assert future.cancel()
    vloop.call_later(1, vloop.stop)
    vloop.start()
    assert future.cancelled()
    names, traceback = [], future.exc_info()[2]
    while traceback is not None:
        names.append(traceback.tb_frame.f_code.co_name)
        traceback = traceback.tb_next
    assert names == ['gives_up_passes']


def test_cancel_from_inside_the_running_coroutine_comes_at_its_next_wait(vloop):
    # While the generator runs, what it last waited for is done: cancel() cannot cancel
    # that, so the CancelledError waits for the next yield that must wait. A yield of a
    # Future already done still delivers its result first.
    trace = []
    own = []
    ready = Future()
    ready.set_result('ready')

    @gen.coroutine
    def coroutine():
        yield gen.moment
        trace.append(('cancel accepted', own[0].cancel()))
        trace.append(('done already', (yield ready)))
        try:
            yield gen.sleep(1)
        except CancelledError:
            trace.append('cancelled at the wait')
            raise

    own.append(coroutine())
    vloop.call_later(5, vloop.stop)
    vloop.start()
    assert trace == [('cancel accepted', True), ('done already', 'ready'),
                     'cancelled at the wait']
    assert own[0].cancelled()


def test_moment_cannot_be_cancelled():
    assert gen.moment.cancel() is False
    assert not gen.moment.done()


# Run in a fresh interpreter: no test module may have imported asyncio or
# tinytornado.platform.asyncio (whose converter would run them instead), as a legacy program
# moving to 3.x has not. ``async def`` is parsed there, so this file still compiles on 2.7.
NATIVE_COROUTINES_PROGRAM = '''
import datetime, sys
from tinytornado import gen
from tinytornado.concurrent import CancelledError
from tinytornado.ioloop import IOLoop

async def double(x):
    await gen.sleep(0.01)
    await gen.moment
    return 2 * x

@gen.coroutine
def legacy():
    value = yield double(21)
    raise gen.Return(value)

async def fails(message):
    await gen.moment
    raise ValueError(message)

ran = []
async def spawned(tag):
    await gen.sleep(0)
    ran.append(tag)

trace = []
async def slow():
    try:
        await gen.sleep(10)
    except CancelledError:
        trace.append('cancelled')
        raise

@gen.coroutine
def times_out():
    try:
        yield gen.with_timeout(datetime.timedelta(seconds=0.05), slow())
    except gen.TimeoutError:
        trace.append('timed out')

loop = IOLoop.current()
print('yielded', loop.run_sync(legacy))
print('run_sync', loop.run_sync(lambda: double(5)))
try:
    loop.run_sync(lambda: fails('raised through run_sync'))
except ValueError as e:
    print('raised', e)
loop.spawn_callback(spawned, 'spawn_callback')
loop.add_callback(spawned, 'add_callback')
loop.call_later(0.01, spawned, 'call_later')
loop.add_callback(fails, 'an async callback failed')
loop.run_sync(lambda: gen.sleep(0.1))
print('callbacks', sorted(ran))
loop.run_sync(times_out)
print('cancellation', trace)

async def in_order_of_finishing():
    return [result async for result in gen.WaitIterator(double(1), gen.sleep(0))]
print('async for', loop.run_sync(in_order_of_finishing))
print('imported', sorted(m for m in ('asyncio', 'tinytornado.platform.asyncio')
                         if m in sys.modules))
'''


@pytest.mark.skipif(sys.version_info < (3, 5), reason='async def is Python 3.5+')
def test_native_coroutines_run_without_the_asyncio_bridge():
    # As in Tornado 5.1, where no import is needed either: yielded, given to run_sync,
    # returned by a loop callback, given to a WaitIterator (and `async for` over it);
    # cancelled by with_timeout; asyncio never imported.
    process = subprocess.Popen([sys.executable, '-c', NATIVE_COROUTINES_PROGRAM],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=dict(os.environ, PYTHONPATH=REPO))
    output, errors = [text.decode('utf-8') for text in process.communicate()]
    assert process.returncode == 0, errors
    assert output.splitlines() == [
        'yielded 42',
        'run_sync 10',
        'raised raised through run_sync',
        "callbacks ['add_callback', 'call_later', 'spawn_callback']",
        "cancellation ['cancelled', 'timed out']",
        'async for [None, 2]',
        'imported []',
    ]
    # Reported as any failed callback, in Tornado 5.1's words.
    assert 'Exception in callback' in errors and 'an async callback failed' in errors
