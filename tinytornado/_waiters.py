"""The FIFO of waiting Futures behind every lock and queue.

A wait is a Future queued in a `Waiters`. Wake-ups take the oldest live waiter, so they
are fair. A waiter that times out or is cancelled is resolved at once and *abandoned*:
every later wake-up skips it, so nothing meant for it (a notification, a semaphore slot, a
queue item) goes with it. Abandoned entries are dropped from the deque in bulk, when they
outnumber the live ones: abandoning is amortised O(1), and a loop of short timed waits
keeps memory bounded.
"""
from __future__ import absolute_import, division, print_function

import collections
import functools

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

    Args:
        timeout_result: what a timed-out waiter resolves with; by default it fails with
            `TimeoutError`.
    """
    __slots__ = ('_entries', '_abandoned', '_timeout_result')

    def __init__(self, timeout_result=RAISE_TIMEOUT):
        self._entries = collections.deque()
        self._abandoned = 0
        self._timeout_result = timeout_result

    def __len__(self):
        """The number of live waiters."""
        return len(self._entries) - self._abandoned

    def add(self, timeout=None, value=None):
        """Queue a new waiter and return its Future.

        Args:
            timeout: a `datetime.timedelta`, or an absolute deadline on the loop's clock.
        """
        future = Future()
        future.set_canceller(functools.partial(self._cancel, future))
        self._entries.append((future, value))
        if timeout is not None:
            io_loop = IOLoop.current()
            handle = io_loop.add_timeout(timeout, self._expire, future)
            future.add_done_callback(lambda f: io_loop.remove_timeout(handle))
        return future

    def pop(self):
        """Remove and return the oldest live waiter as ``(future, value)``; one must exist.

        The caller resolves the Future. Until it does, `cancel()` on it no longer counts it
        here (it has left the queue) but still resolves it, so resolve it with
        `future_set_result_unless_cancelled` if callbacks can run in between.
        """
        entries = self._entries
        future, value = entries.popleft()
        while future.done():
            self._abandoned -= 1
            future, value = entries.popleft()
        future.set_canceller(None)
        return future, value

    def pop_many(self, count):
        """Remove and return up to `count` of the oldest live waiters, oldest first."""
        popped = []
        while len(popped) < count and len(self):
            popped.append(self.pop())
        return popped

    def _cancel(self, future):
        # Counted before the callbacks run, so that they see a consistent length.
        self._abandoned += 1
        future.set_cancelled()
        self._compact()
        return True

    def _expire(self, future):
        self._abandoned += 1
        if self._timeout_result is RAISE_TIMEOUT:
            future.set_exception(TimeoutError('Timeout'))
        else:
            future.set_result(self._timeout_result)
        self._compact()

    def _compact(self):
        if self._abandoned * 2 > len(self._entries):
            self._entries = collections.deque(
                entry for entry in self._entries if not entry[0].done())
            self._abandoned = 0
