from __future__ import absolute_import, division, print_function

import sys
import threading
import time

import pytest

from tinytornado._clock import _ThreadBuffer, linux_monotonic

monotonic = linux_monotonic()
pytestmark = pytest.mark.skipif(monotonic is None, reason='Linux only')


def reference_clock():
    if sys.version_info >= (3, 3):
        return time.monotonic()
    from monotonic import monotonic as backport  # the 2.7 backport reads the same clock
    return backport()


def test_reads_the_system_monotonic_clock():
    before = reference_clock()
    reading = monotonic()
    after = reference_clock()
    assert before <= reading <= after


def test_never_goes_back_and_advances():
    readings = [monotonic() for _ in range(10000)]
    assert readings == sorted(readings)
    start = monotonic()
    while monotonic() == start:
        pass  # the clock has nanoseconds: this ends within microseconds


def test_each_thread_reads_through_its_own_timespec():
    # The fields are read after the call: a timespec shared by threads could give one
    # thread another's seconds with its own nanoseconds.
    shared = _ThreadBuffer()
    seen = []
    thread = threading.Thread(target=lambda: seen.append(shared.buffer[0]))
    thread.start()
    thread.join()
    assert seen[0] is not shared.buffer[0]
    assert shared.buffer[0] is shared.buffer[0]


def test_loop_clock_on_this_interpreter_is_monotonic():
    from tinytornado._compat import monotonic as loop_clock
    readings = [loop_clock() for _ in range(1000)]
    assert readings == sorted(readings)
    assert abs(loop_clock() - reference_clock()) < 1.0
