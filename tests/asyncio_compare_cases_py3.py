"""The same small programs written for tinytornado and for plain asyncio, traced side by side
(collected through test_asyncio_compare.py; Python 3 only).

Each tinytornado program runs on tinytornado's own loop and on AsyncIOLoop; each asyncio
program on a plain asyncio loop. A trace is a list of events; a *ticker*, a callback that
re-adds itself, appends ``'pass N'`` once per loop pass, so a trace also shows in which
pass each event happened. Where the traces differ (mostly Tornado's behaviour, kept on
purpose), the test says why and asserts exactly that difference.
"""
import asyncio
import datetime
import sys
import traceback

import pytest

from loops import io_loop_class  # noqa: F401  (a fixture)
from tinytornado import gen, locks, queues
from tinytornado.concurrent import CancelledError, Future


def tinytornado_trace(io_loop, program):
    """The trace of `program` up to its end (the ticker's later passes left out)."""
    trace, at_end = [], []

    def run():
        future = program(io_loop, trace)
        future.add_done_callback(lambda done: at_end.extend(trace))
        return future

    io_loop.run_sync(run, timeout=5)
    return at_end


def asyncio_trace(program):
    """The trace of `program` up to its end, on a new asyncio loop."""
    async def traced(asyncio_loop, trace):
        await program(asyncio_loop, trace)
        return list(trace)

    asyncio_loop = asyncio.new_event_loop()
    try:
        return asyncio_loop.run_until_complete(
            asyncio.wait_for(traced(asyncio_loop, []), 5))
    finally:
        asyncio_loop.close()


def start_ticker(schedule, trace, passes):
    """Trace ``'pass N'`` in each of the next `passes` passes; `schedule` is add_callback
    or call_soon. Started first, it stays the first callback of every pass."""
    def tick(number):
        trace.append('pass %d' % number)
        if number < passes:
            schedule(tick, number + 1)
    schedule(tick, 1)


def without_passes(trace):
    return [event for event in trace if not str(event).startswith('pass ')]


def pass_of(trace, event):
    """The pass number in which `event` was traced (0: before the first tick)."""
    number = 0
    for item in trace[:trace.index(event)]:
        if str(item).startswith('pass '):
            number = int(item.split()[1])
    return number


# -- callbacks and timers ----------------------------------------------------------------

@gen.coroutine
def tinytornado_callbacks_and_timers(io_loop, trace):
    def first():
        trace.append('callback 1')
        io_loop.add_callback(trace.append, 'callback added by callback 1')
        io_loop.call_later(0, trace.append, 'timer added by callback 1')
    io_loop.add_callback(first)
    io_loop.add_callback(trace.append, 'callback 2')
    io_loop.call_later(0.1, trace.append, 'timer 100ms')
    io_loop.call_later(0.05, trace.append, 'timer 50ms')
    io_loop.call_later(0, trace.append, 'timer 0')
    yield gen.sleep(0.15)


async def asyncio_callbacks_and_timers(asyncio_loop, trace):
    def first():
        trace.append('callback 1')
        asyncio_loop.call_soon(trace.append, 'callback added by callback 1')
        asyncio_loop.call_later(0, trace.append, 'timer added by callback 1')
    asyncio_loop.call_soon(first)
    asyncio_loop.call_soon(trace.append, 'callback 2')
    asyncio_loop.call_later(0.1, trace.append, 'timer 100ms')
    asyncio_loop.call_later(0.05, trace.append, 'timer 50ms')
    asyncio_loop.call_later(0, trace.append, 'timer 0')
    await asyncio.sleep(0.15)


def test_callbacks_and_timers_run_in_asyncios_order(io_loop):
    expected = asyncio_trace(asyncio_callbacks_and_timers)
    assert expected == ['callback 1', 'callback 2', 'timer 0', 'callback added by callback 1',
                        'timer added by callback 1', 'timer 50ms', 'timer 100ms']
    trace = tinytornado_trace(io_loop, tinytornado_callbacks_and_timers)
    assert trace == expected


@gen.coroutine
def tinytornado_equal_deadlines(io_loop, trace):
    deadline = io_loop.time() + 0.001
    for number in range(20):
        io_loop.call_at(deadline, trace.append, number)
    yield gen.sleep(0.005)


async def asyncio_equal_deadlines(asyncio_loop, trace):
    deadline = asyncio_loop.time() + 0.001
    for number in range(20):
        asyncio_loop.call_at(deadline, trace.append, number)
    await asyncio.sleep(0.005)


def test_equal_deadlines_run_in_the_order_added_unlike_asyncio(io_loop):
    # asyncio's timer heap compares deadlines only, so equal deadlines come out in heap
    # order; tinytornado keeps them FIFO on both of its loops.
    trace = tinytornado_trace(io_loop, tinytornado_equal_deadlines)
    expected = asyncio_trace(asyncio_equal_deadlines)
    assert trace == list(range(20))
    assert sorted(expected) == trace and expected != trace


# -- coroutines ----------------------------------------------------------------------------

def test_coroutine_starts_at_once_where_a_task_starts_a_pass_later(io_loop):
    @gen.coroutine
    def tinytornado_program(io_loop, trace):
        start_ticker(io_loop.add_callback, trace, 4)

        @gen.coroutine
        def child():
            trace.append('child starts')
            yield gen.moment
            trace.append('child resumes')
        future = child()
        trace.append('called')
        yield future
        trace.append('parent resumes')

    async def asyncio_program(asyncio_loop, trace):
        start_ticker(asyncio_loop.call_soon, trace, 4)

        async def child():
            trace.append('child starts')
            await asyncio.sleep(0)
            trace.append('child resumes')
        task = asyncio_loop.create_task(child())
        trace.append('called')
        await task
        trace.append('parent resumes')

    # Tornado's difference: calling a coroutine runs it up to its first yield, in the
    # caller's stack; an asyncio task takes its first step in the next pass. And when it
    # returns, its caller resumes at once, as after a plain await, not a pass later.
    assert tinytornado_trace(io_loop, tinytornado_program) == [
        'child starts', 'called', 'pass 1', 'child resumes', 'parent resumes']
    assert asyncio_trace(asyncio_program) == [
        'called', 'pass 1', 'child starts', 'pass 2', 'child resumes', 'pass 3',
        'parent resumes']


@gen.coroutine
def tinytornado_inner(trace):
    yield gen.moment
    trace.append('inner raises')
    raise ValueError('boom')


@gen.coroutine
def tinytornado_middle(trace):
    try:
        yield tinytornado_inner(trace)
    finally:
        trace.append('middle finally')


@gen.coroutine
def tinytornado_three_levels(io_loop, trace):
    start_ticker(io_loop.add_callback, trace, 6)
    try:
        yield tinytornado_middle(trace)
    except ValueError as e:
        trace.append('outer caught %s: %s' % (type(e).__name__, e))
        trace.append(levels_in_traceback(e))


async def asyncio_inner(trace):
    await asyncio.sleep(0)
    trace.append('inner raises')
    raise ValueError('boom')


async def asyncio_middle(trace, call):
    try:
        await call(asyncio_inner(trace))
    finally:
        trace.append('middle finally')


def asyncio_three_levels(call):
    """The asyncio program; `call` wraps each level's coroutine (in a task, or not)."""
    async def program(asyncio_loop, trace):
        start_ticker(asyncio_loop.call_soon, trace, 6)
        try:
            await call(asyncio_middle(trace, call))
        except ValueError as e:
            trace.append('outer caught %s: %s' % (type(e).__name__, e))
            trace.append(levels_in_traceback(e))
    return program


def levels_in_traceback(exc):
    names = [frame.name for frame in traceback.extract_tb(exc.__traceback__)]
    return [name.split('_')[-1] for name in names if name.endswith(('inner', 'middle'))]


def test_exception_crosses_three_levels_in_one_pass_like_an_await_chain(io_loop):
    trace = tinytornado_trace(io_loop, tinytornado_three_levels)
    awaited = asyncio_trace(asyncio_three_levels(lambda coroutine: coroutine))
    in_tasks = asyncio_trace(asyncio_three_levels(asyncio.ensure_future))
    events = ['inner raises', 'middle finally', 'outer caught ValueError: boom',
              ['middle', 'inner']]
    assert without_passes(trace) == without_passes(awaited) == without_passes(in_tasks) \
        == events
    # A returning coroutine resumes its caller in the same pass, as an await chain of
    # plain coroutines unwinds; a task awaiting a task takes a pass per level (and each
    # task starts a pass late).
    assert trace == awaited
    assert [pass_of(trace, event) for event in events[:3]] == [1, 1, 1]
    assert [pass_of(in_tasks, event) for event in events[:3]] == [3, 4, 5]


# -- cancellation ---------------------------------------------------------------------------

def held_tinytornado_lock():
    lock = locks.Lock()
    lock.acquire()
    return lock


async def held_asyncio_lock():
    lock = asyncio.Lock()
    await lock.acquire()
    return lock


TINYTORNADO_WAITS = {
    'sleep': lambda child: gen.sleep(10),
    'future': lambda child: Future(),
    'coroutine': lambda child: child(),
    'queue get': lambda child: queues.Queue().get(),
    'event wait': lambda child: locks.Event().wait(),
    'lock acquire': lambda child: held_tinytornado_lock().acquire(),
}


async def asyncio_wait(kind, child):
    if kind == 'sleep':
        await asyncio.sleep(10)
    elif kind == 'future':
        await asyncio.get_event_loop().create_future()
    elif kind == 'coroutine':
        await child()
    elif kind == 'queue get':
        await asyncio.Queue().get()
    elif kind == 'event wait':
        await asyncio.Event().wait()
    elif kind == 'lock acquire':
        await (await held_asyncio_lock()).acquire()


def tinytornado_cancel_program(kind):
    @gen.coroutine
    def program(io_loop, trace):
        @gen.coroutine
        def child():
            try:
                yield gen.sleep(10)
            except CancelledError:
                trace.append('child cleans up')
                raise

        @gen.coroutine
        def waiter():
            trace.append('waiting')
            try:
                yield TINYTORNADO_WAITS[kind](child)
            except CancelledError:
                trace.append('waiter cleans up')
                raise

        start_ticker(io_loop.add_callback, trace, 6)
        started = []
        io_loop.add_callback(lambda: started.append(waiter()))  # As a task starts.
        yield gen.moment
        yield gen.moment
        trace.append('cancel')
        started[0].cancel()
        while not started[0].done():
            yield gen.moment
        trace.append('cancelled: %s' % started[0].cancelled())
    return program


def asyncio_cancel_program(kind):
    async def program(asyncio_loop, trace):
        async def child():
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                trace.append('child cleans up')
                raise

        async def waiter():
            trace.append('waiting')
            try:
                await asyncio_wait(kind, child)
            except asyncio.CancelledError:
                trace.append('waiter cleans up')
                raise

        start_ticker(asyncio_loop.call_soon, trace, 6)
        task = asyncio_loop.create_task(waiter())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        trace.append('cancel')
        task.cancel()
        while not task.done():
            await asyncio.sleep(0)
        trace.append('cancelled: %s' % task.cancelled())
    return program


@pytest.mark.parametrize('kind', sorted(TINYTORNADO_WAITS))
def test_cancellation_at_each_kind_of_wait_traces_alike(io_loop, kind):
    trace = tinytornado_trace(io_loop, tinytornado_cancel_program(kind))
    assert trace == asyncio_trace(asyncio_cancel_program(kind))
    assert 'waiter cleans up' in trace and trace[-1] == 'cancelled: True'


# -- queues and timeouts ----------------------------------------------------------------------

@gen.coroutine
def tinytornado_producer_consumer(io_loop, trace):
    start_ticker(io_loop.add_callback, trace, 12)
    queue = queues.Queue(maxsize=2)

    @gen.coroutine
    def consumer():
        while True:
            item = yield queue.get()
            trace.append('got %d' % item)
            queue.task_done()

    io_loop.add_callback(consumer)
    for item in range(5):
        yield queue.put(item)
        trace.append('put %d' % item)
    yield queue.join()
    trace.append('joined')


async def asyncio_producer_consumer(asyncio_loop, trace):
    start_ticker(asyncio_loop.call_soon, trace, 12)
    queue = asyncio.Queue(maxsize=2)

    async def consumer():
        while True:
            item = await queue.get()
            trace.append('got %d' % item)
            queue.task_done()

    task = asyncio_loop.create_task(consumer())
    for item in range(5):
        await queue.put(item)
        trace.append('put %d' % item)
    await queue.join()
    trace.append('joined')
    task.cancel()


def test_queue_producer_consumer_hands_items_over_sooner(io_loop):
    trace = tinytornado_trace(io_loop, tinytornado_producer_consumer)
    expected = asyncio_trace(asyncio_producer_consumer)
    for prefix in ('put', 'got'):
        assert [e for e in trace if e.startswith(prefix)] == \
            [e for e in expected if e.startswith(prefix)] == \
            ['%s %d' % (prefix, item) for item in range(5)]
    assert without_passes(trace)[-1] == without_passes(expected)[-1] == 'joined'
    # Tornado's difference: a get that frees a slot moves the blocked put's item into
    # the queue at once, so the consumer takes three items in one pass where asyncio's
    # waits for the putter to run; the queue is drained in fewer passes.
    assert pass_of(trace, 'got 0') == pass_of(trace, 'got 2')
    assert pass_of(expected, 'got 0') < pass_of(expected, 'got 2')
    assert pass_of(trace, 'joined') < pass_of(expected, 'joined')


@gen.coroutine
def tinytornado_timeout(io_loop, trace):
    @gen.coroutine
    def slow():
        try:
            yield gen.sleep(10)
        except CancelledError:
            trace.append('slow is cancelled')
            raise
    try:
        yield gen.with_timeout(datetime.timedelta(seconds=0.001), slow())
    except gen.TimeoutError:
        trace.append('caller times out')


async def asyncio_timeout(asyncio_loop, trace):
    async def slow():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            trace.append('slow is cancelled')
            raise
    try:
        await asyncio.wait_for(slow(), 0.001)
    except asyncio.TimeoutError:
        trace.append('caller times out')


def test_timeout_cancels_the_operation_then_raises_in_the_caller(io_loop):
    trace = tinytornado_trace(io_loop, tinytornado_timeout)
    assert trace == ['slow is cancelled', 'caller times out']
    if sys.version_info < (3, 7):
        # Python 3.6's wait_for raised at once and let the cancelled operation end later.
        assert asyncio_trace(asyncio_timeout) == ['caller times out']
    else:
        assert asyncio_trace(asyncio_timeout) == trace


# -- giving up a pass ---------------------------------------------------------------------------

@gen.coroutine
def tinytornado_give_up_passes(io_loop, trace):
    start_ticker(io_loop.add_callback, trace, 8)
    yield gen.moment
    trace.append('after moment')
    yield None
    trace.append('after None')
    yield gen.sleep(0)
    trace.append('after sleep(0)')


async def asyncio_give_up_passes(asyncio_loop, trace):
    start_ticker(asyncio_loop.call_soon, trace, 8)
    await asyncio.sleep(0)
    trace.append('after moment')
    await asyncio.sleep(0)
    trace.append('after None')
    await asyncio.sleep(0)
    trace.append('after sleep(0)')


def test_moment_and_none_give_up_one_pass_like_asyncio_sleep_0(io_loop):
    trace = tinytornado_trace(io_loop, tinytornado_give_up_passes)
    expected = asyncio_trace(asyncio_give_up_passes)
    assert without_passes(trace) == without_passes(expected)
    assert trace[:trace.index('after None') + 1] == expected[:expected.index('after None') + 1]
    # A difference: gen.sleep(0) is a timer, where asyncio.sleep(0) is special-cased as a
    # bare yield. The timer comes due in the next pass and the coroutine resumes in the one
    # after, so it takes one pass more than asyncio.sleep(0) (gen.moment takes one).
    assert pass_of(trace, 'after sleep(0)') == pass_of(expected, 'after sleep(0)') + 1
