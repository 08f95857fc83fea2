"""Queue, PriorityQueue and LifoQueue: each rule of Tornado 5.1's queue documentation, and
what legacy code reads of a queue (its repr and str, ``_getters``, ``_putters``,
``_unfinished_tasks``, ``_queue``).

Generator tests run as coroutines on the `io_loop` fixture; with `virtual_clock` the loop
jumps to the next timer, so every timeout here is exact and takes no real time.
``async for`` is tested in queues_async_cases_py3.py (Python 3 syntax), collected here.
"""
from __future__ import absolute_import, division, print_function

import collections
import datetime
import gc
import weakref

import pytest

from tinytornado import gen
from tinytornado._compat import PY2
from tinytornado.concurrent import CancelledError, TimeoutError
from tinytornado.queues import LifoQueue, PriorityQueue, Queue, QueueEmpty, QueueFull

if not PY2:
    from queues_async_cases_py3 import *  # noqa: F401,F403


def seconds(n):
    return datetime.timedelta(seconds=n)


@gen.coroutine
def failure_of(future):
    """The exception `future` fails with (None if it succeeds)."""
    try:
        yield future
    except Exception as e:
        raise gen.Return(e)


# -- order and size -------------------------------------------------------------------

@pytest.mark.parametrize('queue_class, expected', [
    (Queue, [3, 1, 2]),
    (LifoQueue, [2, 1, 3]),
    (PriorityQueue, [1, 2, 3]),
])
def test_each_queue_class_returns_items_in_its_order(queue_class, expected):
    q = queue_class()
    for item in (3, 1, 2):
        q.put_nowait(item)
    assert [q.get_nowait() for _ in range(3)] == expected
    assert q.empty()


def test_maxsize_bounds_put_nowait():
    q = Queue(maxsize=2)
    assert q.maxsize == 2 and q.empty() and not q.full()
    q.put_nowait('a')
    q.put_nowait('b')
    assert q.full() and q.qsize() == 2
    with pytest.raises(QueueFull):
        q.put_nowait('c')
    assert q.get_nowait() == 'a' and not q.full()


def test_unbounded_queue_is_never_full():
    q = Queue()
    for item in range(1000):
        q.put_nowait(item)
    assert not q.full() and q.qsize() == 1000 and q.maxsize == 0


@pytest.mark.parametrize('maxsize, error', [(None, TypeError), (-1, ValueError)])
def test_invalid_maxsize_is_refused(maxsize, error):
    with pytest.raises(error):
        Queue(maxsize=maxsize)


def test_get_nowait_on_empty_queue_raises():
    with pytest.raises(QueueEmpty):
        Queue().get_nowait()


def test_a_float_maxsize_is_a_limit_not_unbounded():
    q = Queue(maxsize=1.5)
    q.put_nowait('a')
    assert not q.full()
    q.put_nowait('b')
    assert q.full()
    with pytest.raises(QueueFull):
        q.put_nowait('c')


# -- repr, str and the attributes legacy code reads ----------------------------------

def test_repr_and_str_are_tornado_5_1s(io_loop):
    q = Queue(maxsize=1)
    assert repr(q) == '<Queue at %s maxsize=1>' % hex(id(q))
    assert str(q) == '<Queue maxsize=1>'
    q.get()
    assert repr(q) == '<Queue at %s maxsize=1 getters[1]>' % hex(id(q))
    assert str(q) == '<Queue maxsize=1 getters[1]>'
    q.put_nowait('to the getter')
    q.put_nowait('queued')
    q.put('blocked')
    assert repr(q) == "<Queue at %s maxsize=1 queue=deque(['queued']) putters[1] tasks=2>" % (
        hex(id(q)),)
    assert str(q) == "<Queue maxsize=1 queue=deque(['queued']) putters[1] tasks=2>"


@pytest.mark.parametrize('queue_class, shown', [
    (PriorityQueue, '<PriorityQueue maxsize=0 queue=[1, 2] tasks=2>'),
    (LifoQueue, '<LifoQueue maxsize=0 queue=[2, 1] tasks=2>'),
])
def test_str_of_the_subclasses_names_them(queue_class, shown):
    q = queue_class()
    q.put_nowait(2)
    q.put_nowait(1)
    assert str(q) == shown
    assert repr(q).startswith('<%s at %s ' % (queue_class.__name__, hex(id(q))))


def test_the_attributes_tornados_tests_read(io_loop):
    q = Queue(maxsize=1)
    q.put_nowait('queued')
    blocked = [q.put(item) for item in ('one', 'two')]
    assert len(q._putters) == 2 and len(q._getters) == 0
    assert list(q._queue) == ['queued'] and q._unfinished_tasks == 1
    q.get_nowait()
    assert len(q._putters) == 1 and list(q._queue) == ['one']
    assert q._unfinished_tasks == 2 and blocked[0].done()


# -- waiting getters and putters ------------------------------------------------------

def test_getters_are_served_in_arrival_order(io_loop):
    q = Queue()
    trace = []

    @gen.coroutine
    def getter(name):
        item = yield q.get()
        trace.append((name, item))

    getters = [getter(name) for name in 'abc']
    yield gen.moment
    for item in range(3):
        q.put_nowait(item)
    yield getters
    assert trace == [('a', 0), ('b', 1), ('c', 2)]


def test_a_put_goes_to_the_waiting_getter_not_to_a_later_get(io_loop):
    q = Queue()
    waiting = q.get()
    q.put_nowait('item')
    with pytest.raises(QueueEmpty):
        q.get_nowait()
    assert (yield waiting) == 'item'


def test_putters_wait_while_full_and_keep_their_order(io_loop):
    q = Queue(maxsize=1)
    trace = []

    @gen.coroutine
    def putter(item):
        yield q.put(item)
        trace.append(('put', item))

    putters = [putter(item) for item in range(4)]
    assert trace == [('put', 0)]
    for _ in range(4):
        item = yield q.get()
        trace.append(('got', item))
        yield gen.moment
    yield putters
    assert trace == [('put', 0), ('got', 0), ('put', 1), ('got', 1), ('put', 2),
                     ('got', 2), ('put', 3), ('got', 3)]


def test_a_waiting_putters_item_competes_on_priority(io_loop):
    q = PriorityQueue(maxsize=1)
    q.put_nowait((1, 'queued'))
    put = q.put((0, 'waiting'))
    assert q.get_nowait() == (0, 'waiting')
    assert put.done() and q.get_nowait() == (1, 'queued')


# -- timeouts -------------------------------------------------------------------------

def test_get_times_out_after_a_timedelta(io_loop, virtual_clock):
    q = Queue()
    with pytest.raises(TimeoutError):
        yield q.get(timeout=seconds(1.5))
    assert virtual_clock() == 1.5


def test_get_times_out_at_an_absolute_deadline(io_loop, virtual_clock):
    yield gen.sleep(1)
    q = Queue()
    with pytest.raises(TimeoutError):
        yield q.get(timeout=io_loop.time() + 2)
    assert virtual_clock() == 3


def test_a_plain_number_timeout_is_a_deadline_not_a_delay(io_loop, virtual_clock):
    yield gen.sleep(3)
    with pytest.raises(TimeoutError):
        yield Queue().get(timeout=2)    # loop time 2 is past: no waiting at all
    assert virtual_clock() == 3


def test_a_put_preempts_a_get_timeout(io_loop, virtual_clock):
    q = Queue()
    timers_before = len(io_loop.pending_work()[0])
    io_loop.call_later(1, q.put_nowait, 'item')
    assert (yield q.get(timeout=seconds(2))) == 'item'
    assert virtual_clock() == 1
    assert len(io_loop.pending_work()[0]) == timers_before   # the timeout is gone


def test_a_get_preempts_a_put_timeout(io_loop, virtual_clock):
    q = Queue(maxsize=1)
    q.put_nowait('first')
    timers_before = len(io_loop.pending_work()[0])
    io_loop.call_later(1, q.get_nowait)
    yield q.put('second', timeout=seconds(2))
    assert virtual_clock() == 1 and q.get_nowait() == 'second'
    assert len(io_loop.pending_work()[0]) == timers_before


def test_a_timed_out_put_leaves_its_item_out(io_loop, virtual_clock):
    q = Queue(maxsize=1)
    q.put_nowait('first')
    with pytest.raises(TimeoutError):
        yield q.put('late', timeout=seconds(1))
    assert q.get_nowait() == 'first'
    assert q.empty()
    q.task_done()
    yield q.join(timeout=seconds(0))   # 'late' was never counted as a task


def test_a_timed_out_getter_is_skipped(io_loop, virtual_clock):
    q = Queue()
    early = failure_of(q.get(timeout=seconds(1)))
    late = q.get(timeout=seconds(10))
    yield gen.sleep(2)
    assert isinstance((yield early), TimeoutError)
    q.put_nowait('item')
    assert (yield late) == 'item'
    assert virtual_clock() == 2


def test_timed_out_getters_leave_the_count_when_they_time_out(io_loop, virtual_clock):
    q = Queue()
    early = failure_of(q.get(timeout=seconds(1)))
    late = failure_of(q.get(timeout=seconds(2)))
    patient = q.get()
    seen = [(str(q), len(q._getters))]
    yield gen.sleep(1.5)
    seen.append((str(q), len(q._getters)))
    yield gen.sleep(1)
    seen.append((str(q), len(q._getters)))
    assert seen == [('<Queue maxsize=0 getters[3]>', 3),
                    ('<Queue maxsize=0 getters[2]>', 2),
                    ('<Queue maxsize=0 getters[1]>', 1)]
    assert isinstance((yield early), TimeoutError) and isinstance((yield late), TimeoutError)
    q.put_nowait('item')
    assert (yield patient) == 'item' and str(q) == '<Queue maxsize=0 tasks=1>'


def test_timed_out_getters_are_gone_before_any_put_or_get(io_loop, virtual_clock):
    # Tornado 5.1 counts them until the next put or get (its queues_test checks 11 here):
    # issue 16 chose to drop them at once.
    q = Queue()
    timed = [failure_of(q.get(timeout=seconds(1))) for _ in range(10)]
    patient = q.get()
    assert len(q._getters) == 11
    yield gen.sleep(2)
    assert len(q._getters) == 1 and not patient.done()
    for waited in timed:
        assert isinstance((yield waited), TimeoutError)


class Item(object):
    """A queue item that a weak reference can watch."""


def test_a_timed_out_putter_leaves_with_its_item(io_loop, virtual_clock):
    q = Queue(maxsize=1)
    q.put_nowait('first')
    item = Item()
    watched = weakref.ref(item)
    timed = failure_of(q.put(item, timeout=seconds(1)))
    patient = q.put('patient')
    del item
    assert str(q) == "<Queue maxsize=1 queue=deque(['first']) putters[2] tasks=1>"
    assert isinstance((yield timed), TimeoutError)
    assert str(q) == "<Queue maxsize=1 queue=deque(['first']) putters[1] tasks=1>"
    gc.collect()
    assert watched() is None
    assert q.get_nowait() == 'first' and patient.done()


def test_short_timed_waits_in_a_loop_leave_nothing_behind(io_loop, virtual_clock):
    q = Queue()
    long_wait = q.get()
    refs = []
    for _ in range(1000):
        future = q.get(timeout=seconds(0.001))
        refs.append(weakref.ref(future))
        with pytest.raises(TimeoutError):
            yield future
        del future
    gc.collect()
    assert sum(1 for ref in refs if ref() is not None) <= 1
    q.put_nowait('item')
    assert (yield long_wait) == 'item'


# -- cancellation ---------------------------------------------------------------------

def test_an_item_put_after_its_getter_was_cancelled_stays_in_the_queue(io_loop):
    q = Queue()
    getter = q.get()
    assert getter.cancel()
    q.put_nowait('item')
    assert getter.cancelled()
    assert q.qsize() == 1 and q.get_nowait() == 'item'


def test_an_item_goes_to_the_getter_after_a_cancelled_one(io_loop):
    q = Queue()
    first, second, third = q.get(), q.get(), q.get()
    second.cancel()
    q.put_nowait('a')
    q.put_nowait('b')
    assert (yield first) == 'a' and (yield third) == 'b'
    assert q.empty()


def test_cancelling_a_coroutine_blocked_in_get_withdraws_its_getter(io_loop):
    q = Queue()
    trace = []

    @gen.coroutine
    def worker():
        try:
            item = yield q.get()
            trace.append(('got', item))
        except CancelledError:
            trace.append('cancelled')
            raise

    running = worker()
    yield gen.moment
    assert str(q) == '<Queue maxsize=0 getters[1]>'
    running.cancel()
    assert str(q) == '<Queue maxsize=0>' and len(q._getters) == 0
    with pytest.raises(CancelledError):
        yield running
    q.put_nowait('item')
    assert trace == ['cancelled']
    assert q.get_nowait() == 'item'


def test_cancelling_a_coroutine_blocked_in_put_withdraws_its_putter(io_loop):
    q = Queue(maxsize=1)
    q.put_nowait('first')

    @gen.coroutine
    def producer():
        yield q.put('withdrawn')

    running = producer()
    assert len(q._putters) == 1
    running.cancel()
    assert str(q) == "<Queue maxsize=1 queue=deque(['first']) tasks=1>"
    with pytest.raises(CancelledError):
        yield running
    assert q.get_nowait() == 'first' and q.empty()


def test_with_timeout_cancels_the_get_it_wraps(io_loop, virtual_clock):
    q = Queue()
    with pytest.raises(TimeoutError):
        yield gen.with_timeout(seconds(1), q.get())
    q.put_nowait('item')
    assert q.qsize() == 1


def test_a_cancelled_putter_never_adds_its_item(io_loop):
    q = Queue(maxsize=1)
    q.put_nowait('a')
    withdrawn = q.put('withdrawn')
    kept = q.put('kept')
    assert withdrawn.cancel()
    assert q.get_nowait() == 'a'
    assert kept.done() and withdrawn.cancelled()
    assert q.get_nowait() == 'kept' and q.empty()


def test_a_cancelled_join_does_not_disturb_other_joiners(io_loop):
    q = Queue()
    q.put_nowait('task')
    cancelled, waiting = q.join(), q.join()
    cancelled.cancel()
    q.get_nowait()
    q.task_done()
    yield waiting
    assert cancelled.cancelled()


# -- task_done and join ---------------------------------------------------------------

def test_task_done_more_often_than_put_raises(io_loop):
    q = Queue()
    with pytest.raises(ValueError):
        q.task_done()
    q.put_nowait('x')
    q.get_nowait()
    q.task_done()
    with pytest.raises(ValueError):
        q.task_done()


def test_join_waits_for_every_task_done(io_loop):
    q = Queue()
    yield q.join()                  # nothing was ever put: done at once
    for item in range(3):
        q.put_nowait(item)
    joined = q.join()
    for _ in range(3):
        q.get_nowait()
        assert not joined.done()
        q.task_done()
    yield joined
    later = Queue()
    later.put_nowait('again')
    assert not later.join().done()


def test_join_times_out_while_work_remains(io_loop, virtual_clock):
    q = Queue()
    q.put_nowait('unfinished')
    with pytest.raises(TimeoutError):
        yield q.join(timeout=seconds(3))
    assert virtual_clock() == 3


# -- at scale -------------------------------------------------------------------------

@pytest.mark.gen_test(timeout=60)
def test_ten_thousand_items_through_a_hundred_workers(io_loop, virtual_clock):
    q = Queue(maxsize=50)
    processed = collections.Counter()
    busy = set()
    peak = []

    @gen.coroutine
    def worker(number):
        while True:
            item = yield q.get()
            busy.add(number)
            peak.append(len(busy))
            try:
                yield gen.sleep(0.001 * (item % 7))
                processed[item] += 1
            finally:
                busy.discard(number)
                q.task_done()

    @gen.coroutine
    def producer(start):
        for item in range(start, 10000, 4):
            yield q.put(item)

    workers = [worker(number) for number in range(100)]
    yield [producer(start) for start in range(4)]
    yield q.join()
    assert sorted(processed) == list(range(10000))
    assert set(processed.values()) == {1}
    assert max(peak) == 100
    for running in workers:
        running.cancel()
    for running in workers:
        with pytest.raises(CancelledError):
            yield running
