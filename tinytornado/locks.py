"""Coordination for coroutines: Event, Condition, Semaphore, BoundedSemaphore and Lock.

Tornado 5.1's primitives, for the coroutines of one thread (they are not thread-safe).
Every wait returns a Future; waiters are woken oldest first, and one that times out or is
cancelled gives up its place without taking anything with it (see `_waiters`).

Timeouts: every `timeout` argument is either a `datetime.timedelta` (relative) or an
absolute deadline on the loop's clock (``IOLoop.current().time() + 5``). Beware: a plain
number is a deadline, not a delay. ``timeout=5`` means "at loop time 5", which has long
passed (the loop's clock reads as ``time.time()``), so the wait times out in the next loop
pass.

A wait that has succeeded belongs to whoever holds its Future. A coroutine cancelled in
the moment between its `acquire()` Future resolving and its resuming never receives the
context manager, so the slot stays taken: cancel coroutines that may be acquiring only
when nothing else will need the primitive again (the same holds for a queue's items).
"""
from __future__ import absolute_import, division, print_function

from tinytornado import gen
from tinytornado._waiters import Waiters, resolved_future
from tinytornado.concurrent import future_set_result_unless_cancelled
from tinytornado.ioloop import deadline_for

__all__ = ['Event', 'Condition', 'Semaphore', 'BoundedSemaphore', 'Lock']


class Event(object):
    """A flag coroutines can wait for, like `threading.Event`.

    ::

        yield event.wait()   # resumes once some other coroutine calls event.set()
    """

    def __init__(self):
        self._value = False
        self._waiters = Waiters()

    def __repr__(self):
        return '<%s %s>' % (type(self).__name__, 'set' if self._value else 'clear')

    def is_set(self):
        return self._value

    def set(self):
        """Set the flag and wake every waiter; later waits return at once."""
        if self._value:
            return
        self._value = True
        for future, _ in self._waiters.pop_many(len(self._waiters)):
            future_set_result_unless_cancelled(future, None)

    def clear(self):
        """Reset the flag: later waits block until the next `set`."""
        self._value = False

    def wait(self, timeout=None):
        """A Future resolved (with None) once the flag is set.

        Raises:
            TimeoutError: (through the Future) the flag was not set by `timeout`.
        """
        if self._value:
            return resolved_future(None)
        return self._waiters.add(deadline_for(timeout))


class Condition(object):
    """Lets coroutines wait until another one notifies them.

    Unlike `threading.Condition` there is no lock to hold around `wait` and `notify`: a
    coroutine cannot be interrupted between two yields anyway.
    """

    def __init__(self):
        self._waiters = Waiters(timeout_result=False)

    def __repr__(self):
        if self._waiters:
            return '<%s waiters[%d]>' % (type(self).__name__, len(self._waiters))
        return '<%s>' % type(self).__name__

    def wait(self, timeout=None):
        """A Future resolved with True when notified, or with False at `timeout`."""
        return self._waiters.add(deadline_for(timeout))

    def notify(self, n=1):
        """Wake the `n` longest-waiting coroutines (fewer if fewer are waiting)."""
        for future, _ in self._waiters.pop_many(n):
            future_set_result_unless_cancelled(future, True)

    def notify_all(self):
        """Wake every waiting coroutine."""
        self.notify(len(self._waiters))


class _ReleasingContextManager(object):
    """What `acquire` resolves with: ``with (yield lock.acquire()):`` releases on exit."""
    __slots__ = ('_obj',)

    def __init__(self, obj):
        self._obj = obj

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc_value, traceback):
        self._obj.release()


def _refuse_bare_with(self, *exc_info):
    raise RuntimeError("Use %s like 'with (yield x.acquire()):', not like 'with x:'"
                       % type(self).__name__)


@gen.coroutine
def _acquire_for_async_with(self):
    # As in Tornado 5.1, ``async with x as y`` binds None to y.
    yield self.acquire()


def _release_after_async_with(self, exc_type, exc_value, traceback):
    self.release()
    return resolved_future(None)    # None: the exception, if any, propagates.


class Semaphore(object):
    """A counter of free slots: `acquire` takes one (waiting while none is free),
    `release` gives one back, to the longest waiter if there is one.

    ::

        with (yield semaphore.acquire()):
            yield fetch(url)    # at most `value` coroutines run this at once

    On Python 3, ``async with semaphore:`` acquires and releases it too.
    """

    def __init__(self, value=1):
        if value < 0:
            raise ValueError('semaphore initial value must be >= 0')
        self._value = value
        self._waiters = Waiters()

    def __repr__(self):
        # Tornado 5.1's shape: object's own repr (module, class, address), then the state.
        state = 'locked' if self._value == 0 else 'unlocked,value:%s' % (self._value,)
        if self._waiters:
            state += ',waiters:%d' % len(self._waiters)
        return '<%s [%s]>' % (object.__repr__(self)[1:-1], state)

    def release(self):
        """Free a slot: hand it to the longest waiter, or add it to the counter."""
        if self._waiters:
            future, _ = self._waiters.pop()
            future.set_result(_ReleasingContextManager(self))
        else:
            self._value += 1

    def acquire(self, timeout=None):
        """A Future resolved, once a slot is taken, with a context manager that frees it.

        Raises:
            TimeoutError: (through the Future) no slot came free by `timeout`.
        """
        # A live waiter implies no free slot, so taking one here never jumps the queue.
        if self._value > 0:
            self._value -= 1
            return resolved_future(_ReleasingContextManager(self))
        return self._waiters.add(deadline_for(timeout))

    __enter__ = __exit__ = _refuse_bare_with
    __aenter__ = _acquire_for_async_with
    __aexit__ = _release_after_async_with


class BoundedSemaphore(Semaphore):
    """A Semaphore that refuses to be released more often than acquired."""

    def __init__(self, value=1):
        super(BoundedSemaphore, self).__init__(value)
        self._initial_value = value

    def release(self):
        """Free a slot.

        Raises:
            ValueError: every slot is free already.
        """
        if self._value >= self._initial_value:
            raise ValueError('Semaphore released too many times')
        super(BoundedSemaphore, self).release()


class Lock(object):
    """A mutex for coroutines: ``with (yield lock.acquire()):`` (or, on Python 3,
    ``async with lock:``).

    Not owned by a coroutine: any coroutine may release it.
    """

    def __init__(self):
        self._block = BoundedSemaphore(value=1)

    def __repr__(self):
        return '<%s _block=%s>' % (type(self).__name__, self._block)

    def acquire(self, timeout=None):
        """A Future resolved, once the lock is taken, with a context manager releasing it.

        Raises:
            TimeoutError: (through the Future) the lock was not free by `timeout`.
        """
        return self._block.acquire(timeout)

    def release(self):
        """Unlock, handing the lock to the longest waiter if there is one.

        Raises:
            RuntimeError: the lock is not locked.
        """
        try:
            self._block.release()
        except ValueError:
            raise RuntimeError('release unlocked lock')

    __enter__ = __exit__ = _refuse_bare_with
    __aenter__ = _acquire_for_async_with
    __aexit__ = _release_after_async_with
