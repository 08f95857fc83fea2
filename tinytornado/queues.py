"""Queues for coroutines: Queue (FIFO), PriorityQueue and LifoQueue, as in Tornado 5.1.

Not thread-safe: from another thread, hand the call to the loop with `add_callback`.

The invariant: getters wait only while the queue is empty, putters only while it is full.
So a put that finds a getter waiting hands its item straight to the oldest one, and a get
that finds a putter waiting takes the oldest putter's item into the queue; no item ever
overtakes a waiter. A getter or putter that timed out or was cancelled has left the line
(see `_waiters`): no item is handed to it, and a cancelled putter's item is never added.

Timeouts: `timeout` is a `datetime.timedelta`, or an absolute deadline on the loop's clock
(``IOLoop.current().time() + 5``). Beware: a plain number is a deadline, not a delay.
``q.get(timeout=5)`` means "by loop time 5", long past (the loop's clock reads as
``time.time()``), so it times out in the next loop pass.
"""
from __future__ import absolute_import, division, print_function

import collections
import heapq

from tinytornado._waiters import Waiters, resolved_future
from tinytornado.ioloop import deadline_for
from tinytornado.locks import Event

__all__ = ['Queue', 'PriorityQueue', 'LifoQueue', 'QueueEmpty', 'QueueFull']


class QueueEmpty(Exception):
    """`Queue.get_nowait` found no item."""


class QueueFull(Exception):
    """`Queue.put_nowait` found the queue at its maxsize."""


class Queue(object):
    """Coordinates producer and consumer coroutines; `maxsize` 0 means unbounded.

    ::

        @gen.coroutine
        def worker():
            while True:
                item = yield queue.get()
                try:
                    yield process(item)
                finally:
                    queue.task_done()

    Subclasses choose the order by overriding `_init`, `_put` and `_get`.
    """

    def __init__(self, maxsize=0):
        if maxsize is None:
            raise TypeError("maxsize can't be None")
        if maxsize < 0:
            raise ValueError("maxsize can't be negative")
        self._maxsize = maxsize
        self._init()
        self._getters = Waiters()
        self._putters = Waiters()
        self._unfinished_tasks = 0
        self._finished = Event()
        self._finished.set()

    def __repr__(self):
        return '<%s at %s %s>' % (type(self).__name__, hex(id(self)), self._format())

    def __str__(self):
        return '<%s %s>' % (type(self).__name__, self._format())

    def _format(self):
        # Tornado 5.1's words, which legacy code and logs may match; an empty part is left out.
        parts = ['maxsize=%r' % (self._maxsize,)]
        if self._queue:
            parts.append('queue=%r' % (self._queue,))
        if self._getters:
            parts.append('getters[%d]' % len(self._getters))
        if self._putters:
            parts.append('putters[%d]' % len(self._putters))
        if self._unfinished_tasks:
            parts.append('tasks=%d' % self._unfinished_tasks)
        return ' '.join(parts)

    @property
    def maxsize(self):
        """The number of items allowed in the queue; 0 for no limit."""
        return self._maxsize

    def qsize(self):
        return len(self._queue)

    def empty(self):
        return not self._queue

    def full(self):
        return 0 < self._maxsize <= len(self._queue)

    def put(self, item, timeout=None):
        """Put `item` in, waiting while the queue is full.

        Returns a Future resolved once the item is in (cancel it to withdraw the item).

        Raises:
            TimeoutError: (through the Future) there was no room by `timeout`; the item
                was not put.
        """
        try:
            self.put_nowait(item)
        except QueueFull:
            return self._putters.add(deadline_for(timeout), item)
        return resolved_future(None)

    def put_nowait(self, item):
        """Put `item` in without waiting.

        Raises:
            QueueFull: there is no room.
        """
        if self._getters:
            future, _ = self._getters.pop()
            self._put_internal(item)
            future.set_result(self._get())
        elif self.full():
            raise QueueFull
        else:
            self._put_internal(item)

    def get(self, timeout=None):
        """A Future resolved with the next item, once there is one.

        Raises:
            TimeoutError: (through the Future) no item came by `timeout`.
        """
        try:
            return resolved_future(self.get_nowait())
        except QueueEmpty:
            return self._getters.add(deadline_for(timeout))

    def get_nowait(self):
        """Remove and return the next item without waiting.

        Raises:
            QueueEmpty: there is none.
        """
        if self._putters:
            # The queue is full: the oldest putter's item takes the place this get frees.
            future, item = self._putters.pop()
            self._put_internal(item)
            future.set_result(None)
            return self._get()
        if self._queue:
            return self._get()
        raise QueueEmpty

    def task_done(self):
        """Mark one item taken from the queue as processed (for `join`).

        Raises:
            ValueError: called more often than items were put.
        """
        if self._unfinished_tasks <= 0:
            raise ValueError('task_done() called too many times')
        self._unfinished_tasks -= 1
        if self._unfinished_tasks == 0:
            self._finished.set()

    def join(self, timeout=None):
        """A Future resolved once every item put has been marked with `task_done`.

        Raises:
            TimeoutError: (through the Future) work remained at `timeout`.
        """
        return self._finished.wait(timeout)

    def __aiter__(self):
        """``async for item in queue:`` (Python 3): each step waits for `get`; it never ends."""
        return _QueueIterator(self)

    def _put_internal(self, item):
        self._unfinished_tasks += 1
        self._finished.clear()
        self._put(item)

    # -- the order, for subclasses ------------------------------------------------------

    def _init(self):
        self._queue = collections.deque()

    def _get(self):
        return self._queue.popleft()

    def _put(self, item):
        self._queue.append(item)


class _QueueIterator(object):
    __slots__ = ('_queue',)

    def __init__(self, queue):
        self._queue = queue

    def __anext__(self):
        return self._queue.get()


class PriorityQueue(Queue):
    """A Queue that returns the lowest item first: put ``(priority, item)`` tuples."""

    def _init(self):
        self._queue = []

    def _put(self, item):
        heapq.heappush(self._queue, item)

    def _get(self):
        return heapq.heappop(self._queue)


class LifoQueue(Queue):
    """A Queue that returns the most recently put item first."""

    def _init(self):
        self._queue = []

    def _put(self, item):
        self._queue.append(item)

    def _get(self):
        return self._queue.pop()
