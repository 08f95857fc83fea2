"""Event, Condition, Semaphore, BoundedSemaphore and Lock: each rule of Tornado 5.1's
locks documentation, with timeouts on a virtual clock and ordering through trace lists;
and what legacy code reads of them (reprs, ``_waiters``, ``_value``, ``_block``).

``async with`` is tested in locks_async_cases_py3.py (Python 3 syntax), collected here.
"""
from __future__ import absolute_import, division, print_function

import datetime

import pytest

from tinytornado import gen
from tinytornado._compat import PY2
from tinytornado.concurrent import CancelledError, TimeoutError
from tinytornado.locks import BoundedSemaphore, Condition, Event, Lock, Semaphore

if not PY2:
    from locks_async_cases_py3 import *  # noqa: F401,F403


def seconds(n):
    return datetime.timedelta(seconds=n)


def waiting(future):
    return not future.done()


def semaphore_repr(semaphore, state):
    """Tornado 5.1's repr of a (Bounded)Semaphore in `state`, e.g. 'locked,waiters:1'."""
    return '<tinytornado.locks.%s object at %s [%s]>' % (
        type(semaphore).__name__, hex(id(semaphore)), state)


@gen.coroutine
def wait_on(future, trace):
    """Wait for `future` in a coroutine of its own; trace a cancellation."""
    try:
        yield future
    except CancelledError:
        trace.append('cancelled')
        raise


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


def test_event_repr_and_str_say_set_or_clear():
    event = Event()
    assert repr(event) == str(event) == '<Event clear>'
    event.set()
    assert repr(event) == str(event) == '<Event set>'
    assert event._value is True


def test_event_waiters_leave_the_count_on_timeout_and_cancel(io_loop, virtual_clock):
    event = Event()
    timed = event.wait(timeout=seconds(1))
    cancelled = event.wait()
    patient = event.wait()
    assert len(event._waiters) == 3
    cancelled.cancel()
    assert len(event._waiters) == 2
    with pytest.raises(TimeoutError):
        yield timed
    assert len(event._waiters) == 1
    event.set()
    assert patient.done() and len(event._waiters) == 0


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


def test_condition_repr_counts_waiters_and_drops_them_on_timeout_and_cancel(
        io_loop, virtual_clock):
    condition = Condition()
    assert repr(condition) == str(condition) == '<Condition>'
    timed = condition.wait(timeout=seconds(1))
    trace = []
    cancelled = wait_on(condition.wait(), trace)
    patient = condition.wait()
    assert repr(condition) == '<Condition waiters[3]>' and len(condition._waiters) == 3
    cancelled.cancel()
    assert repr(condition) == '<Condition waiters[2]>'
    assert (yield timed) is False
    assert repr(condition) == '<Condition waiters[1]>'
    condition.notify()
    assert patient.result() is True and repr(condition) == '<Condition>'
    assert trace == ['cancelled']


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
    assert semaphore._value == 2 and len(semaphore._waiters) == 0


def test_semaphore_repr_is_tornado_5_1s(io_loop):
    semaphore = Semaphore(2)
    shown = [repr(semaphore)]
    semaphore.acquire()
    semaphore.acquire()
    shown.append(repr(semaphore))
    semaphore.acquire()
    shown.append(str(semaphore))
    assert shown == [semaphore_repr(semaphore, 'unlocked,value:2'),
                     semaphore_repr(semaphore, 'locked'),
                     semaphore_repr(semaphore, 'locked,waiters:1')]


def test_semaphore_waiters_leave_the_count_on_timeout_and_cancel(io_loop, virtual_clock):
    semaphore = Semaphore(0)
    timed = semaphore.acquire(timeout=seconds(1))
    trace = []
    cancelled = wait_on(semaphore.acquire(), trace)
    patient = semaphore.acquire()
    assert repr(semaphore) == semaphore_repr(semaphore, 'locked,waiters:3')
    cancelled.cancel()
    assert repr(semaphore) == semaphore_repr(semaphore, 'locked,waiters:2')
    with pytest.raises(TimeoutError):
        yield timed
    assert repr(semaphore) == semaphore_repr(semaphore, 'locked,waiters:1')
    semaphore.release()
    assert patient.done() and repr(semaphore) == semaphore_repr(semaphore, 'locked')
    assert trace == ['cancelled']


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
    with (yield semaphore.acquire()) as bound:
        queued = semaphore.acquire()
        assert waiting(queued) and bound is None
    assert queued.done()
    assert semaphore._value == 0 and len(semaphore._waiters) == 0


def test_the_context_manager_releases_when_the_block_raises(io_loop):
    semaphore = Semaphore(1)
    with pytest.raises(ZeroDivisionError):
        with (yield semaphore.acquire()):
            1 / 0
    assert semaphore._value == 1


def test_yielding_the_semaphore_itself_is_a_bad_yield(io_loop):
    # A common slip: ``with (yield semaphore):`` for ``with (yield semaphore.acquire()):``.
    with pytest.raises(gen.BadYieldError):
        with (yield Semaphore()):
            pass


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
    assert waiting(lock.acquire())      # still locked


def test_lock_repr_shows_its_bounded_semaphore(io_loop):
    lock = Lock()
    template = '<Lock _block=<tinytornado.locks.BoundedSemaphore object at %s [%%s]>>' % (
        hex(id(lock._block)),)
    shown = [repr(lock)]
    lock.acquire()
    shown.append(repr(lock))
    lock.acquire()
    shown.append(str(lock))
    assert shown == [template % 'unlocked,value:1', template % 'locked',
                     template % 'locked,waiters:1']


def test_lock_waiters_leave_the_count_on_timeout_and_cancel(io_loop, virtual_clock):
    lock = Lock()
    yield lock.acquire()
    timed = lock.acquire(timeout=seconds(1))
    trace = []
    cancelled = wait_on(lock.acquire(), trace)
    assert len(lock._block._waiters) == 2
    cancelled.cancel()
    assert len(lock._block._waiters) == 1
    with pytest.raises(TimeoutError):
        yield timed
    assert len(lock._block._waiters) == 0 and lock._block._value == 0
    lock.release()
    assert lock._block._value == 1 and trace == ['cancelled']


def test_yielding_the_lock_itself_is_a_bad_yield(io_loop):
    with pytest.raises(gen.BadYieldError):
        with (yield Lock()):
            pass


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
