from __future__ import absolute_import, division, print_function

import random

from tinytornado._timerqueue import LOAD, TimerQueue


def stable_sorted(entries):
    """The order the queue must keep: by deadline, ties in the order they were pushed."""
    return sorted(entries, key=lambda entry: entry[0])


def pushed(entries):
    queue = TimerQueue()
    for deadline, payload in entries:
        queue.push(deadline, payload)
    return queue


def random_entries(count, distinct_deadlines, seed):
    rng = random.Random(seed)
    return [(rng.randrange(distinct_deadlines) / 8.0, index) for index in range(count)]


def test_random_pushes_come_out_by_deadline_then_push_order():
    # Few distinct deadlines: long runs of ties that span bucket splits.
    entries = random_entries(6 * LOAD, 40, seed=1)
    queue = pushed(entries)
    assert len(queue) == len(entries)
    assert list(queue) == stable_sorted(entries)


def test_ties_pushed_after_a_split_stay_behind_the_earlier_ones():
    entries = [(1.0, index) for index in range(5 * LOAD)]
    entries += [(0.5, 'early'), (1.0, 'last'), (2.0, 'late')]
    queue = pushed(entries)
    assert list(queue) == stable_sorted(entries)


def test_pop_due_takes_the_due_prefix_in_order():
    entries = random_entries(5 * LOAD, 1000, seed=2)
    queue = pushed(entries)
    expected = stable_sorted(entries)
    taken = []
    for now in (-1.0, 3.0, 3.0, 60.5, 124.875, 1000.0):
        due = queue.pop_due(now)
        assert due == [payload for deadline, payload in expected
                       if deadline <= now][len(taken):]
        taken.extend(due)
        assert len(queue) == len(entries) - len(taken)
    assert list(queue) == [] and queue.length == 0


def test_pushes_between_pops_keep_the_order():
    rng = random.Random(3)
    queue = TimerQueue()
    reference = []
    now = 0.0
    for _ in range(40):
        for index in range(100):
            deadline = now + rng.randrange(50) / 4.0
            queue.push(deadline, (now, index))
            reference.append((deadline, (now, index)))
        now += 3.0
        due = queue.pop_due(now)
        reference = stable_sorted(reference)
        assert due == [payload for deadline, payload in reference if deadline <= now]
        reference = [entry for entry in reference if entry[0] > now]
        assert list(queue) == reference


def test_first_and_pop_first():
    queue = pushed([(2.0, 'b'), (1.0, 'a'), (2.0, 'c')])
    popped = []
    while queue.length:
        popped.append(queue.first())
        queue.pop_first()
    assert popped == [(1.0, 'a'), (2.0, 'b'), (2.0, 'c')]
    queue.push(3.0, 'd')
    assert list(queue) == [(3.0, 'd')]


def test_a_queue_rebuilt_by_retain_keeps_ties_in_order_and_accepts_pushes():
    entries = random_entries(3 * LOAD, 30, seed=4)
    queue = pushed(entries)
    kept = [entry for entry in queue if entry[1] % 3]
    queue.retain(set(payload for _, payload in kept))
    assert list(queue) == kept
    queue.push(-1.0, 'new first')
    queue.push(100.0, 'new last')
    assert list(queue) == [(-1.0, 'new first')] + kept + [(100.0, 'new last')]


def test_retain_keeps_the_live_entries_in_order_and_accepts_pushes():
    entries = random_entries(5 * LOAD, 30, seed=4)
    queue = pushed(entries)
    live = set(payload for _, payload in entries if payload % 3)
    queue.retain(live)
    kept = [entry for entry in stable_sorted(entries) if entry[1] in live]
    assert len(queue) == len(kept) and list(queue) == kept
    queue.push(1.0, 'pushed')
    queue.push(100.0, 'last')
    expected = stable_sorted(kept + [(1.0, 'pushed'), (100.0, 'last')])
    popped = []
    while len(queue):
        popped.append(queue.first())
        queue.pop_first()
    assert popped == expected
    queue = pushed(entries)
    queue.retain(set())
    assert len(queue) == 0 and list(queue) == []
