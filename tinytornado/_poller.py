"""Readiness polling for the IOLoop: epoll where the OS has it, else the best selector.

The pollers speak the loop's own event bits (READ=0x001, WRITE=0x004, ERROR=0x018, as
Tornado). They are epoll's own bits, so on Linux events pass through untranslated and a
poll is one C call; elsewhere `selectors` is adapted (it reports errors as readability).
`SelectPoller`, select() itself, is for the loops that ask for it by name
(`tinytornado.platform.select.SelectIOLoop`).
"""
from __future__ import absolute_import, division, print_function

import errno
import math
import select

from tinytornado._compat import EPOLL_TRUNCATES_TIMEOUT, POLL_RAISES_EINTR, selectors

__all__ = ['READ', 'WRITE', 'ERROR', 'SelectPoller', 'make_poller']

READ = 0x001
WRITE = 0x004
ERROR = 0x018


class _EpollPoller(object):
    """select.epoll, with None as "wait for ever" on 2.7 too."""

    def __init__(self):
        self._epoll = select.epoll()
        self.register = self._epoll.register
        self.modify = self._epoll.modify
        self.unregister = self._epoll.unregister
        self.close = self._epoll.close
        if not (EPOLL_TRUNCATES_TIMEOUT or POLL_RAISES_EINTR):
            # 3.x's epoll takes None, rounds up and retries after a signal by itself:
            # poll without a Python frame.
            self.poll = self._epoll.poll

    def poll(self, delay):
        if delay is None:
            delay = -1
        elif EPOLL_TRUNCATES_TIMEOUT and delay > 0:
            # Whole milliseconds, rounded up; the half keeps float error from truncating.
            delay = (math.ceil(delay * 1000) + 0.5) / 1000.0
        try:
            return self._epoll.poll(delay)
        except (IOError, OSError) as e:
            if e.errno != errno.EINTR:
                raise
            return []  # A signal: the pass goes on (its handler may have added callbacks).


class _SelectorPoller(object):
    """A `selectors` selector (default: the platform's best) that takes and reports the
    loop's event bits."""

    def __init__(self, selector=None):
        self._selector = selector if selector is not None else selectors.DefaultSelector()
        self.unregister = self._selector.unregister
        self.close = self._selector.close

    def register(self, fd, events):
        self._selector.register(fd, _selector_mask(events))

    def modify(self, fd, events):
        self._selector.modify(fd, _selector_mask(events))

    def poll(self, delay):
        ready = []
        for key, mask in self._selector.select(delay):
            events = 0
            if mask & selectors.EVENT_READ:
                events |= READ
            if mask & selectors.EVENT_WRITE:
                events |= WRITE
            ready.append((key.fd, events))
        return ready


class SelectPoller(_SelectorPoller):
    """select() itself, on every system: a poll costs time in proportion to the
    descriptors watched, and none numbered FD_SETSIZE (1024) or more can be watched."""

    def __init__(self):
        super(SelectPoller, self).__init__(selectors.SelectSelector())


def _selector_mask(events):
    mask = 0
    if events & WRITE:
        mask |= selectors.EVENT_WRITE
    if events & READ or not mask:
        # selectors cannot watch for errors alone: they show up as readability.
        mask |= selectors.EVENT_READ
    return mask


def make_poller():
    return _EpollPoller() if hasattr(select, 'epoll') else _SelectorPoller()
