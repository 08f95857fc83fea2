"""A sequence of payloads sorted by deadline that stays O(log n) per operation at a million.

Equal deadlines keep the order they were pushed in (FIFO): a push goes after every entry
with the same deadline (`bisect_right`), so no sequence number is needed to break ties.

A single list kept with ``bisect.insort`` moves half the list on every insert and, popped
from the front, on every fire. Here the entries are split into buckets of at most
``2 * LOAD``, with a parallel list of each bucket's last deadline: a push bisects the
bucket maxima, then inserts into one short bucket (both in C), and firing timers removes a
prefix of the first bucket at once. Timers pushed in deadline order (the common case: one
delay used again and again) append to the last bucket.

Each bucket is two parallel lists, deadlines and payloads, rather than one list of
``(deadline, payload)`` tuples: bisecting compares bare numbers, which is several times
cheaper than comparing tuples, and a million timers add no tuple the garbage collector
must walk (with integer payloads they add no object it tracks at all).
"""
from __future__ import absolute_import, division, print_function

from bisect import bisect_right

__all__ = ['TimerQueue']

LOAD = 512


class TimerQueue(object):
    """Payloads in deadline order; iterating yields ``(deadline, payload)`` pairs."""
    __slots__ = ('_deadlines', '_payloads', '_maxes', 'length')

    def __init__(self):
        self._fill([], [])

    def _fill(self, deadlines, payloads):
        """Hold `payloads` at `deadlines`, two parallel lists in queue order."""
        self._deadlines = [deadlines[i:i + LOAD] for i in range(0, len(deadlines), LOAD)]
        self._payloads = [payloads[i:i + LOAD] for i in range(0, len(payloads), LOAD)]
        self._maxes = [bucket[-1] for bucket in self._deadlines]
        # An attribute as well as __len__: the loop reads it every pass, without a call.
        self.length = len(payloads)

    def __len__(self):
        return self.length

    def __iter__(self):
        for deadlines, payloads in zip(self._deadlines, self._payloads):
            for entry in zip(deadlines, payloads):
                yield entry

    def push(self, deadline, payload):
        maxes = self._maxes
        self.length += 1
        if not maxes or deadline >= maxes[-1]:
            if not maxes or len(self._payloads[-1]) >= 2 * LOAD:
                self._deadlines.append([deadline])
                self._payloads.append([payload])
                maxes.append(deadline)
            else:
                self._deadlines[-1].append(deadline)
                self._payloads[-1].append(payload)
                maxes[-1] = deadline
            return
        # The first bucket whose last deadline is later: entries equal to `deadline` in
        # the buckets before it stay ahead of this one.
        index = bisect_right(maxes, deadline)
        deadlines = self._deadlines[index]
        position = bisect_right(deadlines, deadline)
        deadlines.insert(position, deadline)
        payloads = self._payloads[index]
        payloads.insert(position, payload)
        if len(payloads) > 2 * LOAD:
            # Split in two so inserts into this bucket stay short.
            self._deadlines[index:index + 1] = [deadlines[:LOAD], deadlines[LOAD:]]
            self._payloads[index:index + 1] = [payloads[:LOAD], payloads[LOAD:]]
            maxes[index:index + 1] = [deadlines[LOAD - 1], deadlines[-1]]

    def retain(self, live):
        """Keep only the entries whose payload is in `live`, in their order.

        No tuple per entry: dropping most of a large queue at once (timers cancelled
        together) would otherwise make as many objects for the garbage collector to count,
        and its full passes over a large heap are what made such a storm slow.
        """
        deadlines, payloads = [], []
        for bucket_deadlines, bucket_payloads in zip(self._deadlines, self._payloads):
            for deadline, payload in zip(bucket_deadlines, bucket_payloads):
                if payload in live:
                    deadlines.append(deadline)
                    payloads.append(payload)
        self._fill(deadlines, payloads)

    def first(self):
        """The earliest ``(deadline, payload)``; the queue must not be empty."""
        return self._deadlines[0][0], self._payloads[0][0]

    def pop_first(self):
        """Remove the earliest entry; the queue must not be empty."""
        deadlines = self._deadlines[0]
        del deadlines[0]
        del self._payloads[0][0]
        if not deadlines:
            self._drop_first_bucket()
        self.length -= 1

    def pop_due(self, now):
        """Remove every entry whose deadline is <= now; return their payloads in order."""
        maxes = self._maxes
        due = []
        while maxes:
            if maxes[0] <= now:
                due.extend(self._payloads[0])
                self._drop_first_bucket()
                continue
            count = bisect_right(self._deadlines[0], now)
            if count:
                payloads = self._payloads[0]
                due.extend(payloads[:count])
                del payloads[:count]
                del self._deadlines[0][:count]
            break
        self.length -= len(due)
        return due

    def _drop_first_bucket(self):
        del self._deadlines[0]
        del self._payloads[0]
        del self._maxes[0]
