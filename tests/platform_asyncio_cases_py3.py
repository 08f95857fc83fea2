"""Tests of tinytornado.platform.asyncio (collected through test_platform_asyncio.py).

Python 3 only: ``async def`` cannot even be parsed by 2.7.
"""
import asyncio
import datetime
import os
import socket
import sys
import traceback

import pytest

from loops import io_loop_class, loop_class_for  # noqa: F401  (io_loop_class: a fixture)
from tinytornado import gen
from tinytornado.concurrent import CancelledError, Future
from tinytornado.ioloop import IOLoop, PollIOLoop
from tinytornado.platform.asyncio import (
    AnyThreadEventLoopPolicy, AsyncIOLoop, AsyncIOMainLoop, BaseAsyncIOLoop, to_asyncio_future,
    to_tinytornado_future, to_tornado_future,
)


@pytest.fixture(params=['asyncio', 'uvloop'])
def asyncio_io_loop(request):
    """An asyncio-backed IOLoop: on asyncio's own event loop, and on uvloop's."""
    loop = loop_class_for(request.param)(make_current=False)
    loop.make_current()
    yield loop
    IOLoop.clear_current()
    loop.close(all_fds=True)


def current_task():
    if hasattr(asyncio, 'current_task'):
        return asyncio.current_task()
    return asyncio.Task.current_task()  # Python 3.6


def run_asyncio(coroutine):
    """`asyncio.run`, also on 3.6, which does not have it."""
    asyncio_loop = asyncio.new_event_loop()
    try:
        return asyncio_loop.run_until_complete(coroutine)
    finally:
        asyncio_loop.close()


def frame_names(tb):
    return [frame.name for frame in traceback.extract_tb(tb)]


@gen.coroutine
def double_later(value):
    yield gen.moment
    raise gen.Return(value * 2)


@gen.coroutine
def wait_forever(trace, name):
    """Wait on a Future nobody resolves; trace how the wait ends."""
    try:
        yield Future()
    except CancelledError:
        trace.append('%s: tinytornado CancelledError' % name)
        raise


async def await_forever(trace, name, awaitable):
    """Await `awaitable`; trace how the await ends."""
    try:
        await awaitable
    except asyncio.CancelledError:
        trace.append('%s: asyncio.CancelledError' % name)
        raise


# -- a gen.coroutine yields asyncio things --------------------------------------------

def test_coroutine_yields_asyncio_future_task_and_native_coroutine(asyncio_io_loop):
    async def native(value):
        await asyncio.sleep(0)
        return value

    @gen.coroutine
    def main():
        asyncio_loop = asyncio_io_loop.asyncio_loop
        future = asyncio_loop.create_future()
        asyncio_loop.call_soon(future.set_result, 'future')
        task = asyncio.ensure_future(native('task'), loop=asyncio_loop)
        results = [(yield future), (yield task), (yield native('coroutine'))]
        results.append((yield [native('in a list'), asyncio.sleep(0.001, result='sleep')]))
        raise gen.Return(results)

    assert asyncio_io_loop.run_sync(main) == [
        'future', 'task', 'coroutine', ['in a list', 'sleep']]


def test_native_coroutine_runs_as_an_asyncio_task_on_asyncio(asyncio_io_loop):
    async def native():
        return current_task()

    @gen.coroutine
    def main():
        task = yield native()
        raise gen.Return(task)

    assert isinstance(asyncio_io_loop.run_sync(main), asyncio.Task)


def test_native_coroutine_is_driven_by_the_runner_on_the_own_loop(io_loop_class):
    io_loop = io_loop_class(make_current=True)

    async def native():
        await asyncio.sleep(0)  # A bare yield: one pass, no asyncio loop needed.
        return await double_later(21), asyncio._get_running_loop()

    @gen.coroutine
    def main():
        result = yield native()
        raise gen.Return(result)

    value, asyncio_loop = io_loop.run_sync(main)
    io_loop.close()
    assert value == 42
    assert asyncio_loop is getattr(io_loop, 'asyncio_loop', None)


def test_failure_of_yielded_asyncio_task_keeps_its_traceback(asyncio_io_loop):
    async def fails():
        await asyncio.sleep(0)
        raise KeyError('inside the task')

    @gen.coroutine
    def main():
        yield asyncio.ensure_future(fails(), loop=asyncio_io_loop.asyncio_loop)

    with pytest.raises(KeyError) as caught:
        asyncio_io_loop.run_sync(main)
    assert 'fails' in frame_names(caught.tb)


# -- async def awaits tinytornado things ----------------------------------------------

def test_async_def_awaits_future_and_decorated_coroutine(io_loop):
    async def main():
        future = Future()
        io_loop.add_callback(future.set_result, 'resolved')
        done = Future()
        done.set_result('done already')
        return [await future, await done, await double_later(21)]

    assert io_loop.run_sync(main) == ['resolved', 'done already', 42]


def test_run_sync_of_async_def_function_returns_and_raises(io_loop):
    async def returns():
        return await double_later(2)

    async def fails():
        await double_later(1)
        raise ValueError('from async def')

    assert io_loop.run_sync(returns) == 4
    with pytest.raises(ValueError) as caught:
        io_loop.run_sync(fails)
    assert 'fails' in frame_names(caught.tb)


def test_await_moment_gives_up_one_pass(io_loop):
    trace = []

    async def main():
        io_loop.add_callback(trace.append, 'callback')
        await gen.moment
        trace.append('after the moment')

    io_loop.run_sync(main, timeout=0.05)
    assert trace == ['callback', 'after the moment']


def test_asyncio_run_awaits_coroutines_on_the_adopted_loop():
    async def main():
        io_loop = AsyncIOMainLoop(make_current=False)
        io_loop.make_current()
        try:
            assert io_loop.asyncio_loop is asyncio.get_event_loop()
            assert io_loop.is_running()
            with pytest.raises(RuntimeError):
                io_loop.run_sync(lambda: None)
            value = await double_later(await gen.sleep(0.001) or 4)
            return value, await gen.multi([double_later(1), asyncio.sleep(0, result=3)])
        finally:
            IOLoop.clear_current()
            io_loop.close()

    assert run_asyncio(main()) == (8, [2, 3])


def test_main_loop_adopts_the_current_loop_and_leaves_it_open():
    asyncio_loop = asyncio.new_event_loop()
    asyncio.set_event_loop(asyncio_loop)
    try:
        io_loop = AsyncIOMainLoop(make_current=False)
        assert io_loop.asyncio_loop is asyncio_loop
        assert io_loop.run_sync(lambda: double_later(5)) == 10
        io_loop.close()
        assert not asyncio_loop.is_closed()
        assert asyncio_loop.run_until_complete(asyncio.sleep(0, result='still usable')) \
            == 'still usable'
    finally:
        asyncio.set_event_loop(None)
        asyncio_loop.close()


def test_the_adopted_loop_takes_keyword_arguments_for_calls_and_timers(no_current_loop):
    # Legacy code inside an asyncio program schedules calls with keywords, as 5.1 takes them.
    trace = []

    def record(label, *args, **kwargs):
        trace.append((label, args, sorted(kwargs.items())))

    def finish(done, result):
        done.set_result(result)

    async def main():
        io_loop = IOLoop.current()
        assert isinstance(io_loop, AsyncIOMainLoop)
        done = asyncio.get_event_loop().create_future()
        io_loop.add_callback(record, 'add_callback', 1, a=2)
        io_loop.spawn_callback(record, 'spawn_callback', b=3)
        io_loop.add_callback_from_signal(record, 'from_signal', c=4)
        removed = io_loop.call_later(0.01, record, 'removed', d=5)
        io_loop.add_timeout(datetime.timedelta(seconds=0.02), record, 'add_timeout', e=6)
        io_loop.call_at(io_loop.time() + 0.03, finish, done, result='done')
        io_loop.remove_timeout(removed)
        return await done

    assert run_asyncio(main()) == 'done'
    assert trace == [('add_callback', (1,), [('a', 2)]),
                     ('spawn_callback', (), [('b', 3)]),
                     ('from_signal', (), [('c', 4)]),
                     ('add_timeout', (), [('e', 6)])]


# -- cancellation crosses the bridge ---------------------------------------------------

def test_cancelling_the_coroutine_cancels_the_asyncio_task_it_waits_for(asyncio_io_loop):
    trace = []
    task = asyncio.ensure_future(await_forever(trace, 'task', asyncio.sleep(10)),
                                 loop=asyncio_io_loop.asyncio_loop)

    @gen.coroutine
    def waiter():
        try:
            yield task
        except CancelledError:
            trace.append('coroutine: tinytornado CancelledError')
            raise

    @gen.coroutine
    def main():
        future = waiter()
        yield gen.sleep(0.001)
        future.cancel()
        while not future.done():
            yield gen.moment
        raise gen.Return(future.cancelled())

    assert asyncio_io_loop.run_sync(main) is True
    assert task.cancelled()
    assert trace == ['task: asyncio.CancelledError', 'coroutine: tinytornado CancelledError']


def test_cancelling_the_task_cancels_the_coroutine_it_awaits(asyncio_io_loop):
    trace = []

    async def main():
        task = asyncio.ensure_future(await_forever(trace, 'task', wait_forever(trace, 'gen')))
        await asyncio.sleep(0.001)
        task.cancel()
        await asyncio.wait([task])
        return task.cancelled()

    assert asyncio_io_loop.run_sync(main) is True
    assert trace == ['gen: tinytornado CancelledError', 'task: asyncio.CancelledError']


def test_cancellation_reaches_async_def_as_asyncio_cancelled_error(io_loop):
    trace = []

    @gen.coroutine
    def main():
        future = gen.convert_yielded(await_forever(trace, 'native', gen.sleep(10)))
        yield gen.moment
        future.cancel()
        while not future.done():
            yield gen.moment
        cancelled = Future()
        cancelled.cancel()
        second = gen.convert_yielded(await_forever(trace, 'already cancelled', cancelled))
        while not second.done():
            yield gen.moment
        raise gen.Return([future.cancelled(), second.cancelled()])

    assert io_loop.run_sync(main) == [True, True]
    assert trace == ['native: asyncio.CancelledError',
                     'already cancelled: asyncio.CancelledError']


def test_asyncio_wait_for_cancels_the_future_it_times_out(asyncio_io_loop):
    async def main():
        future = Future()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(future, 0.001)
        while not future.done():
            await asyncio.sleep(0)  # Python 3.6's wait_for does not wait for the cancel.
        return future.cancelled()

    assert asyncio_io_loop.run_sync(main, timeout=5) is True


# -- to_asyncio_future / to_tinytornado_future -----------------------------------------

def test_futures_convert_both_ways_with_results_failures_and_cancellation(asyncio_io_loop):
    @gen.coroutine
    def fails():
        yield gen.moment
        raise IndexError('tinytornado side')

    async def main():
        asyncio_loop = asyncio_io_loop.asyncio_loop
        results = [await to_asyncio_future(double_later(3))]
        with pytest.raises(IndexError):
            await to_asyncio_future(fails())
        back = to_tinytornado_future(to_asyncio_future(double_later(4)))
        results.append(await back)
        source = asyncio_loop.create_future()
        converted = to_tinytornado_future(source)
        asyncio_loop.call_soon(source.cancel)
        with pytest.raises(asyncio.CancelledError):
            await converted
        results.append(converted.cancelled())
        pending = Future()
        bridged = to_asyncio_future(pending)
        bridged.cancel()
        await asyncio.sleep(0)
        results.append(pending.cancelled())
        return results

    assert asyncio_io_loop.run_sync(main) == [6, 8, True, True]


def test_to_asyncio_future_takes_anything_a_coroutine_may_yield(asyncio_io_loop):
    async def native():
        return 'native'

    async def main():
        return [await to_asyncio_future([double_later(1), double_later(2)]),
                await to_asyncio_future(native())]

    assert asyncio_io_loop.run_sync(main) == [[2, 4], 'native']


# -- the loop itself -------------------------------------------------------------------

def test_asyncio_calls_the_handler_once_per_event(asyncio_io_loop):
    """A documented difference: asyncio watches reading and writing separately."""
    calls = []
    reader, writer = socket.socketpair()
    writer.send(b'x')

    def on_events(fd, events):
        calls.append(events)
        if len(calls) == 2:
            asyncio_io_loop.remove_handler(fd)
            asyncio_io_loop.stop()

    asyncio_io_loop.add_handler(reader, on_events, IOLoop.READ | IOLoop.WRITE)
    asyncio_io_loop.start()
    reader.close()
    writer.close()
    assert sorted(calls) == [IOLoop.READ, IOLoop.WRITE]


def test_pending_work_lists_timers_and_files_but_not_the_loops_own(asyncio_io_loop):
    reader, writer = socket.socketpair()
    assert asyncio_io_loop.pending_work() == ([], [])
    late = asyncio_io_loop.call_at(asyncio_io_loop.time() + 20, writer.close)
    asyncio_io_loop.call_at(asyncio_io_loop.time() + 10, reader.close)
    asyncio_io_loop.add_handler(reader, lambda fd, events: None, IOLoop.READ)
    asyncio_io_loop.remove_timeout(late)
    timers, fileobjs = asyncio_io_loop.pending_work()
    assert [callback for _, callback in timers] == [reader.close]
    assert fileobjs == [reader]
    writer.close()


def test_closing_closes_the_asyncio_loop_it_made():
    io_loop = AsyncIOLoop(make_current=False)
    asyncio_loop = io_loop.asyncio_loop
    handle = io_loop.call_later(10, lambda: None)
    io_loop.close()
    io_loop.remove_timeout(handle)  # Harmless after close, as on the own loop.
    assert asyncio_loop.is_closed()
    io_loop.add_callback(lambda: None)  # Dropped, as on a closed IOLoop.
    with pytest.raises(RuntimeError):
        io_loop.start()


def test_the_asyncio_loop_is_a_sibling_with_nothing_of_the_own_loop():
    assert PollIOLoop not in BaseAsyncIOLoop.__mro__
    io_loop = AsyncIOLoop(make_current=False)
    bare = asyncio.new_event_loop()
    try:
        assert isinstance(io_loop, IOLoop) and not isinstance(io_loop, PollIOLoop)
        own_parts = ['_poller', '_waker', '_timers', '_timer_callbacks', '_callbacks']
        assert [name for name in own_parts if hasattr(io_loop, name)] == []
        # It watches no descriptor of its own: only asyncio's self-pipe, as a bare loop.
        assert len(io_loop.asyncio_loop._selector.get_map()) == \
            len(bare._selector.get_map())
    finally:
        bare.close()
        io_loop.close()


def test_a_refused_asyncio_loop_closes_the_asyncio_loop_it_made(io_loop, monkeypatch):
    made = []
    real_new_event_loop = asyncio.new_event_loop

    def new_event_loop():
        made.append(real_new_event_loop())
        return made[-1]
    monkeypatch.setattr(asyncio, 'new_event_loop', new_event_loop)
    with pytest.raises(RuntimeError):
        AsyncIOLoop(make_current=True)
    assert [asyncio_loop.is_closed() for asyncio_loop in made] == [True]
    assert IOLoop.current() is io_loop


@pytest.mark.parametrize('impl', [AsyncIOLoop, 'tinytornado.platform.asyncio.AsyncIOLoop',
                                  'tornado.platform.asyncio.AsyncIOLoop'])
def test_ioloop_makes_the_configured_asyncio_loop(impl, saved_ioloop_configuration):
    IOLoop.configure(impl)
    io_loop = IOLoop(make_current=False)
    io_loop.close()
    assert type(io_loop) is AsyncIOLoop and io_loop.asyncio_loop.is_closed()


def test_current_on_configured_asyncio_wraps_the_threads_asyncio_loop(
        saved_ioloop_configuration, no_current_loop):
    IOLoop.configure(AsyncIOLoop)
    asyncio_loop = asyncio.new_event_loop()
    asyncio.set_event_loop(asyncio_loop)
    try:
        io_loop = IOLoop.current()
        assert type(io_loop) is AsyncIOMainLoop and io_loop.asyncio_loop is asyncio_loop
        # Coroutines run by asyncio's loop find it current: one loop for both.
        assert asyncio_loop.run_until_complete(to_asyncio_future(double_later(4))) == 8
        io_loop.close()
    finally:
        asyncio.set_event_loop(None)
        asyncio_loop.close()


def test_the_mix_asyncio_example(capsys):
    examples = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            'examples')
    sys.path.insert(0, examples)
    try:
        import mix_asyncio_py3
    finally:
        sys.path.remove(examples)
    seen = run_asyncio(mix_asyncio_py3.main())
    assert seen == ['a after 0.10s', 'b after 0.05s', 'asyncio.sleep, yielded']
    output = capsys.readouterr().out
    assert 'the asyncio consumer saw 3 items' in output
    assert 'asyncio.wait_for timed out' in output
    assert 'legacy_slow: cancelled by asyncio.wait_for, cleaning up' in output
    assert IOLoop.current(instance=False) is None


def test_the_any_thread_policy_gives_a_worker_thread_its_own_loop():
    from concurrent.futures import ThreadPoolExecutor

    def get_and_close():
        loop = asyncio.get_event_loop()
        loop.close()
        return loop

    executor = ThreadPoolExecutor(1)
    main_thread_policy = asyncio.get_event_loop_policy()
    try:
        with pytest.raises(RuntimeError):
            executor.submit(asyncio.get_event_loop).result()
        asyncio.set_event_loop_policy(AnyThreadEventLoopPolicy())
        first = executor.submit(get_and_close).result()
        assert isinstance(first, asyncio.AbstractEventLoop) and first.is_closed()
        # The thread keeps the loop it was given, as asyncio's main thread does.
        assert executor.submit(asyncio.get_event_loop).result() is first
    finally:
        asyncio.set_event_loop_policy(main_thread_policy)
        executor.shutdown()


def test_to_tornado_future_is_tornado_51s_name_for_to_tinytornado_future():
    assert to_tornado_future is to_tinytornado_future


def test_an_asyncio_future_no_loop_runs_fails_rather_than_waiting_for_ever():
    # On 3.6 and 3.7, asyncio.sleep() on tinytornado's own loop makes such a Future.
    asyncio_loop = asyncio.new_event_loop()
    loop = PollIOLoop(make_current=False)

    @gen.coroutine
    def waits():
        yield asyncio_loop.create_future()
    try:
        with pytest.raises(RuntimeError, match='asyncio loop that is not running'):
            loop.run_sync(waits, timeout=5)
    finally:
        loop.close()
        asyncio_loop.close()
