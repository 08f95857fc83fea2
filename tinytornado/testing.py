"""Helpers for testing code built on tinytornado (and for tinytornado's own tests).

`VirtualClock` makes timer tests exact and instant: give it to ``IOLoop(time_func=...)``
and the loop, instead of sleeping until the next deadline, jumps the clock there.
"""
from __future__ import absolute_import, division, print_function

__all__ = ['VirtualClock']


class VirtualClock(object):
    """A loop clock that moves only when advanced: by a test, or by the loop when it
    has nothing to run before the next deadline."""

    def __init__(self, start=0.0):
        self.now = start

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds
