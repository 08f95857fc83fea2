"""A sorted sequence of timer entries that stays O(log n) per operation at a million timers.

Entries are tuples ``(deadline, seq, payload)``; ``seq`` is unique, so tuples compare on
(deadline, seq) alone and equal deadlines keep their insertion (FIFO) order.

A single list kept with ``bisect.insort`` moves half the list on every insert and, popped
from the front, on every fire. Here the entries are split into buckets of at most
``2 * LOAD`` sorted entries, with a parallel list of each bucket's last entry: an insert
bisects the bucket maxima, then inserts into one short bucket (both in C), and firing
timers removes a prefix of the first bucket at once. Timers added in deadline order (the
common case: one delay used again and again) append to the last bucket.
"""
from __future__ import absolute_import, division, print_function

from bisect import bisect_left, bisect_right, insort

__all__ = ['TimerQueue']

LOAD = 512
_AFTER_ANY_SEQ = float('inf')


class TimerQueue(object):
    """Timer entries sorted by (deadline, seq)."""
    __slots__ = ('_buckets', '_maxes', 'length')

    def __init__(self, entries=()):
        entries = sorted(entries)
        self._buckets = [entries[i:i + LOAD] for i in range(0, len(entries), LOAD)]
        self._maxes = [bucket[-1] for bucket in self._buckets]
        # An attribute as well as __len__: the loop reads it every pass, without a call.
        self.length = len(entries)

    def __len__(self):
        return self.length

    def __iter__(self):
        for bucket in self._buckets:
            for entry in bucket:
                yield entry

    def push(self, entry):
        maxes = self._maxes
        self.length += 1
        if not maxes or entry > maxes[-1]:
            if not maxes or len(self._buckets[-1]) >= 2 * LOAD:
                self._buckets.append([entry])
                maxes.append(entry)
            else:
                self._buckets[-1].append(entry)
                maxes[-1] = entry
            return
        index = bisect_left(maxes, entry)
        bucket = self._buckets[index]
        insort(bucket, entry)
        if len(bucket) > 2 * LOAD:
            # Split in two so inserts into this bucket stay short.
            self._buckets[index:index + 1] = [bucket[:LOAD], bucket[LOAD:]]
            maxes[index:index + 1] = [bucket[LOAD - 1], bucket[-1]]

    def first(self):
        """The earliest entry; the queue must not be empty."""
        return self._buckets[0][0]

    def pop_first(self):
        """Remove and return the earliest entry; the queue must not be empty."""
        bucket = self._buckets[0]
        entry = bucket.pop(0)
        if not bucket:
            del self._buckets[0]
            del self._maxes[0]
        self.length -= 1
        return entry

    def pop_due(self, now):
        """Remove and return, in order, every entry whose deadline is <= now."""
        buckets = self._buckets
        due = []
        while buckets:
            bucket = buckets[0]
            if bucket[-1][0] <= now:
                due.extend(bucket)
                del buckets[0]
                del self._maxes[0]
                continue
            count = bisect_right(bucket, (now, _AFTER_ANY_SEQ))
            if count:
                due.extend(bucket[:count])
                del bucket[:count]
            break
        self.length -= len(due)
        return due
