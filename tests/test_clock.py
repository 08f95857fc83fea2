from __future__ import absolute_import, division, print_function

import sys
import threading
import time

import pytest

from tinytornado import _compat
from tinytornado._clock import _ThreadBuffer, linux_monotonic
from tinytornado._extension import speedups

CTYPES_CLOCK = linux_monotonic()  # None off Linux
C_CLOCK = getattr(speedups, 'monotonic', None)  # built on 2.7 only: 3.x has time.monotonic
# The 2.7 clocks, tested on every version: ctypes' where the C one is not built.
each_clock = pytest.mark.parametrize('monotonic', [
    pytest.param(CTYPES_CLOCK, id='ctypes',
                 marks=pytest.mark.skipif(CTYPES_CLOCK is None, reason='Linux only')),
    pytest.param(C_CLOCK, id='C',
                 marks=pytest.mark.skipif(C_CLOCK is None, reason='2.7 with the C speedups')),
])


def reference_clock():
    if sys.version_info >= (3, 3):
        return time.monotonic()
    from monotonic import monotonic as backport  # the 2.7 backport reads the same clock
    return backport()


@each_clock
def test_reads_the_system_monotonic_clock(monotonic):
    before = reference_clock()
    reading = monotonic()
    after = reference_clock()
    assert before <= reading <= after


@each_clock
def test_never_goes_back_and_advances(monotonic):
    readings = [monotonic() for _ in range(10000)]
    assert readings == sorted(readings)
    start = monotonic()
    while monotonic() == start:
        pass  # the clock has nanoseconds: this ends within microseconds


@pytest.mark.skipif(CTYPES_CLOCK is None, reason='Linux only')
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
    loop_clock = _compat.monotonic
    readings = [loop_clock() for _ in range(1000)]
    assert readings == sorted(readings)
    assert abs(loop_clock() - reference_clock()) < 1.0


@pytest.mark.skipif(C_CLOCK is None, reason='2.7 with the C speedups')
def test_the_loop_takes_the_c_clock_where_it_is_built():
    assert _compat.monotonic is C_CLOCK
