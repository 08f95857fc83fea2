"""Event, Condition, Semaphore, BoundedSemaphore and Lock: each rule of Tornado 5.1's
locks documentation, with timeouts on a virtual clock and ordering through trace lists."""
from __future__ import absolute_import, division, print_function

import datetime

import pytest

from tinytornado import gen
from tinytornado.concurrent import CancelledError, TimeoutError
from tinytornado.locks import BoundedSemaphore, Condition, Event, Lock, Semaphore


def seconds(n):
    return datetime.timedelta(seconds=n)


def waiting(future):
    return not future.done()


# -- Event ----------------------------------------------------------------------------

def test_event_wakes_every_waiter_in_order_when_set(io_loop):
    event = Event()
    trace = []

    @gen.coroutine
    def waiter(name):
        yield event.wait()
        trace.append(name)

    waiters = [waiter(name) for name in 'abc']
    yield gen.moment
    assert trace == [] and not event.is_set()
    event.set()
    yield waiters
    assert trace == ['a', 'b', 'c']


def test_event_wait_returns_at_once_while_set_and_blocks_after_clear(io_loop):
    event = Event()
    event.set()
    assert event.is_set() and event.wait().done()
    event.clear()
    assert not event.is_set() and waiting(event.wait())
    assert repr(event) == '<Event clear>'


def test_event_wait_times_out(io_loop, virtual_clock):
    event = Event()
    with pytest.raises(TimeoutError):
        yield event.wait(timeout=seconds(2))
    assert virtual_clock() == 2


def test_setting_an_event_preempts_the_timeout(io_loop, virtual_clock):
    event = Event()
    io_loop.call_later(1, event.set)
    yield event.wait(timeout=seconds(5))
    assert virtual_clock() == 1


def test_a_cancelled_event_waiter_does_not_disturb_the_others(io_loop):
    event = Event()
    first, cancelled, last = event.wait(), event.wait(), event.wait()
    assert cancelled.cancel()
    event.set()
    assert first.done() and last.done() and cancelled.cancelled()


# -- Condition ------------------------------------------------------------------------

def test_condition_wakes_the_waiter_after_the_notifier_returns(io_loop):
    condition = Condition()
    trace = []

    @gen.coroutine
    def waiter():
        trace.append('waiting')
        notified = yield condition.wait()
        trace.append(('woken', notified))

    @gen.coroutine
    def notifier():
        trace.append('notifying')
        condition.notify()
        trace.append('notified')

    yield [waiter(), notifier()]
    assert trace == ['waiting', 'notifying', 'notified', ('woken', True)]


def test_notify_n_wakes_the_n_oldest_waiters(io_loop):
    condition = Condition()
    trace = []

    @gen.coroutine
    def waiter(name):
        yield condition.wait()
        trace.append(name)

    for name in 'abcde':
        waiter(name)
    condition.notify(2)
    yield gen.moment
    assert trace == ['a', 'b']
    condition.notify(1)
    yield gen.moment
    assert trace == ['a', 'b', 'c']
    condition.notify_all()
    yield gen.moment
    assert trace == ['a', 'b', 'c', 'd', 'e']
    assert repr(condition) == '<Condition waiters[0]>'


def test_a_notify_with_no_waiter_is_not_remembered(io_loop):
    condition = Condition()
    condition.notify()
    condition.notify_all()
    assert waiting(condition.wait())


def test_condition_wait_resolves_false_on_timeout(io_loop, virtual_clock):
    condition = Condition()
    notified = yield condition.wait(timeout=seconds(1))
    assert notified is False and virtual_clock() == 1


def test_timed_out_and_cancelled_waiters_do_not_use_up_notifications(io_loop, virtual_clock):
    condition = Condition()
    timed_out = condition.wait(timeout=seconds(1))
    cancelled = condition.wait()
    first, second = condition.wait(), condition.wait()
    cancelled.cancel()
    yield gen.sleep(2)
    assert timed_out.result() is False
    condition.notify(2)
    assert first.result() is True and second.result() is True


def test_a_waiter_cancelled_by_another_waiters_wakeup_is_dropped(io_loop):
    condition = Condition()
    first, second = condition.wait(), condition.wait()
    others = [condition.wait() for _ in range(3)]
    first.add_done_callback(lambda f: second.cancel())
    condition.notify(2)
    assert first.result() is True and second.cancelled()
    assert not any(other.done() for other in others)
    condition.notify_all()
    assert all(other.result() is True for other in others)


# -- Semaphore ------------------------------------------------------------------------

def test_semaphore_counts_acquires_and_releases(io_loop):
    semaphore = Semaphore(2)
    assert semaphore.acquire().done() and semaphore.acquire().done()
    blocked = semaphore.acquire()
    assert waiting(blocked)
    semaphore.release()
    assert blocked.done()
    semaphore.release()
    semaphore.release()
    assert repr(semaphore) == '<Semaphore unlocked,value:2>'


def test_semaphore_refuses_a_negative_value():
    with pytest.raises(ValueError):
        Semaphore(-1)


def test_a_plain_semaphore_may_be_released_above_its_initial_value(io_loop):
    semaphore = Semaphore(0)
    semaphore.release()
    semaphore.release()
    assert semaphore.acquire().done() and semaphore.acquire().done()
    assert waiting(semaphore.acquire())


def test_semaphore_caps_concurrency_and_serves_waiters_in_order(io_loop):
    semaphore = Semaphore(3)
    running = set()
    peak = []
    order = []

    @gen.coroutine
    def worker(number):
        with (yield semaphore.acquire()):
            order.append(number)
            running.add(number)
            peak.append(len(running))
            yield gen.sleep(0.01 * (number % 3))
            running.discard(number)

    yield [worker(number) for number in range(10)]
    assert max(peak) == 3
    assert order == list(range(10))
    assert semaphore.acquire().done()


def test_acquire_resolves_to_a_context_manager_that_releases(io_loop):
    semaphore = Semaphore(1)
    with (yield semaphore.acquire()):
        queued = semaphore.acquire()
        assert waiting(queued)
    assert queued.done()
    assert repr(semaphore) == '<Semaphore locked,waiters:0>'


def test_a_semaphore_refuses_a_bare_with():
    with pytest.raises(RuntimeError):
        with Semaphore():
            pass


def test_semaphore_acquire_times_out_and_leaves_the_slot_free(io_loop, virtual_clock):
    semaphore = Semaphore(1)
    yield semaphore.acquire()
    with pytest.raises(TimeoutError):
        yield semaphore.acquire(timeout=seconds(1))
    semaphore.release()
    assert semaphore.acquire().done()
    assert virtual_clock() == 1


def test_a_release_skips_cancelled_acquirers(io_loop):
    semaphore = Semaphore(1)
    yield semaphore.acquire()
    cancelled, served = semaphore.acquire(), semaphore.acquire()
    cancelled.cancel()
    semaphore.release()
    assert served.done() and cancelled.cancelled()
    semaphore.release()
    assert semaphore.acquire().done()      # the slot was not lost to the cancelled one


def test_cancelling_a_coroutine_waiting_to_acquire_returns_nothing_to_it(io_loop):
    semaphore = Semaphore(0)
    trace = []

    @gen.coroutine
    def worker():
        with (yield semaphore.acquire()):
            trace.append('acquired')

    running = worker()
    yield gen.moment
    running.cancel()
    with pytest.raises(CancelledError):
        yield running
    semaphore.release()
    assert trace == [] and semaphore.acquire().done()


def test_bounded_semaphore_refuses_extra_releases(io_loop):
    semaphore = BoundedSemaphore(2)
    with pytest.raises(ValueError):
        semaphore.release()
    yield semaphore.acquire()
    yield semaphore.acquire()
    semaphore.release()
    semaphore.release()
    with pytest.raises(ValueError):
        semaphore.release()


def test_bounded_semaphore_hands_a_release_to_a_waiter(io_loop):
    semaphore = BoundedSemaphore(1)
    yield semaphore.acquire()
    blocked = semaphore.acquire()
    semaphore.release()
    assert blocked.done()
    semaphore.release()
    with pytest.raises(ValueError):
        semaphore.release()


# -- Lock -----------------------------------------------------------------------------

def test_lock_excludes_and_serves_waiters_in_order(io_loop):
    lock = Lock()
    trace = []

    @gen.coroutine
    def critical(name):
        with (yield lock.acquire()):
            trace.append(('enter', name))
            yield gen.moment
            yield gen.moment
            trace.append(('exit', name))

    yield [critical(name) for name in 'abc']
    assert trace == [('enter', 'a'), ('exit', 'a'), ('enter', 'b'), ('exit', 'b'),
                     ('enter', 'c'), ('exit', 'c')]


def test_lock_release_when_unlocked_raises(io_loop):
    lock = Lock()
    with pytest.raises(RuntimeError):
        lock.release()
    yield lock.acquire()
    lock.release()
    with pytest.raises(RuntimeError):
        lock.release()


def test_a_lock_refuses_a_bare_with():
    with pytest.raises(RuntimeError):
        with Lock():
            pass


def test_lock_acquire_times_out(io_loop, virtual_clock):
    lock = Lock()
    yield lock.acquire()
    with pytest.raises(TimeoutError):
        yield lock.acquire(timeout=io_loop.time() + 4)
    assert virtual_clock() == 4
    assert '<Lock _block=<BoundedSemaphore locked' in repr(lock)


def test_a_cancelled_lock_waiter_passes_the_lock_on(io_loop):
    lock = Lock()
    yield lock.acquire()
    cancelled, next_in_line = lock.acquire(), lock.acquire()
    cancelled.cancel()
    lock.release()
    assert next_in_line.done()
    lock.release()
    assert lock.acquire().done()


def test_with_timeout_around_acquire_withdraws_it(io_loop, virtual_clock):
    lock = Lock()
    yield lock.acquire()
    with pytest.raises(TimeoutError):
        yield gen.with_timeout(seconds(1), lock.acquire())
    lock.release()
    assert lock.acquire().done()
