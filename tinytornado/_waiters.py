"""The FIFO of waiting Futures behind every lock and queue.

A wait is a Future queued in a `Waiters`. Wake-ups take the oldest waiter, so they are
fair. A waiter that times out or is cancelled is resolved and removed at once, with the
value it carried (a blocked putter's item): nothing meant for it (a notification, a
semaphore slot, a queue item) can go to it later, its count is gone from `len()` (and so
from the owner's repr) at that moment, and a loop of short timed waits keeps nothing
behind. An insertion-ordered map from Future to value makes that removal O(1), where
Tornado 5.1's deque left the dead entries in place until a later put, get or sweep.
"""
from __future__ import absolute_import, division, print_function

import collections
import functools

from tinytornado._kernel import set_new_exception
from tinytornado.concurrent import Future, TimeoutError
from tinytornado.ioloop import IOLoop

__all__ = ['Waiters', 'RAISE_TIMEOUT', 'resolved_future']

# The `timeout_result` that makes a timed-out wait fail with TimeoutError.
RAISE_TIMEOUT = object()


def resolved_future(value):
    """A Future already resolved with `value` (which may itself be a Future)."""
    future = Future()
    future.set_result(value)
    return future


class Waiters(object):
    """Waiter Futures in arrival order, each with a value (a blocked putter's item).

    `len()` counts the waiters still in line: what Tornado's ``_getters``, ``_putters``
    and ``_waiters`` are read for.

    Args:
        timeout_result: what a timed-out waiter resolves with; by default it fails with
            `TimeoutError`.
    """
    __slots__ = ('_entries', '_timeout_result')

    def __init__(self, timeout_result=RAISE_TIMEOUT):
        self._entries = collections.OrderedDict()
        self._timeout_result = timeout_result

    def __len__(self):
        return len(self._entries)

    def add(self, deadline=None, value=None):
        """Queue a new waiter, expiring at loop time `deadline` if not None; its Future."""
        future = Future()
        future.set_canceller(functools.partial(self._cancel, future))
        self._entries[future] = value
        if deadline is not None:
            io_loop = IOLoop.current()
            handle = io_loop.call_at(deadline, self._expire, future)
            future.add_done_callback(lambda f: io_loop.remove_timeout(handle))
        return future

    def pop(self):
        """Remove and return the oldest waiter as ``(future, value)``; one must exist.

        The caller resolves the Future. Until it does, `cancel()` on it no longer counts it
        here (it has left the line) but still resolves it, so resolve it with
        `future_set_result_unless_cancelled` if callbacks can run in between.
        """
        future, value = self._entries.popitem(last=False)
        future.set_canceller(None)
        return future, value

    def pop_many(self, count):
        """Remove and return up to `count` of the oldest waiters, oldest first."""
        return [self.pop() for _ in range(min(count, len(self._entries)))]

    def _cancel(self, future):
        # Removed before the callbacks run, so that they see the new length.
        del self._entries[future]
        future.set_cancelled()
        return True

    def _expire(self, future):
        del self._entries[future]
        if self._timeout_result is RAISE_TIMEOUT:
            set_new_exception(future, TimeoutError('Timeout'))
        else:
            future.set_result(self._timeout_result)
