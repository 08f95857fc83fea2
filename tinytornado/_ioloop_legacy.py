"""Tornado 5.1's watchdog over a loop kept from its poll: the blocking alarm
(`set_blocking_signal_threshold`, `set_blocking_log_threshold`, `log_stack`), as mixins
of ioloop's classes.

The alarm is SIGALRM from ``signal.setitimer``, started when a pass's work begins and
stopped while the loop waits in its poll. A loop that sets one has its poller wrapped in a
`_WatchedPoller` that does this around each poll, so a loop without an alarm pays nothing
for the feature. Only ioloop imports this module; new code watches for slow callbacks
with a profiler instead.
"""
from __future__ import absolute_import, division, print_function

import signal
import traceback

from tinytornado.log import gen_log

__all__ = ['BlockingAlarm', 'PolledBlockingAlarm']


class BlockingAlarm(object):
    """The blocking alarm's interface, of every IOLoop (a mixin of `IOLoop`)."""

    _blocking_signal_threshold = None

    def set_blocking_signal_threshold(self, seconds, action):
        """Send this process SIGALRM, handled by `action` (a signal handler; None: the
        default, which ends the process), when the loop runs callbacks, handlers and timers
        for more than `seconds` without coming back to its poll; None turns it off. Only
        from the main thread, on Unix, and on tinytornado's own loop, as in Tornado 5.1.
        """
        raise NotImplementedError('this loop has no blocking alarm')

    def set_blocking_log_threshold(self, seconds):
        """Log the stack (`log_stack`) when the loop is blocked for more than `seconds`."""
        self.set_blocking_signal_threshold(seconds, self.log_stack)

    def log_stack(self, signum, frame):
        """A signal handler that logs, as blocking the loop, the stack it interrupted."""
        gen_log.warning('IOLoop blocked for %f seconds in\n%s', self._blocking_signal_threshold,
                        ''.join(traceback.format_stack(frame)))


class PolledBlockingAlarm(BlockingAlarm):
    """The blocking alarm of a loop that waits in ``self._poller`` (a mixin of
    `PollIOLoop`): the poller is swapped for a `_WatchedPoller` while an alarm is set."""

    def set_blocking_signal_threshold(self, seconds, action):
        if not hasattr(signal, 'setitimer'):
            raise NotImplementedError('set_blocking_signal_threshold needs signal.setitimer')
        poller = getattr(self._poller, 'unwatched', self._poller)
        self._blocking_signal_threshold = seconds
        if seconds is None:
            self._poller = poller
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
        else:
            signal.signal(signal.SIGALRM, signal.SIG_DFL if action is None else action)
            self._poller = _WatchedPoller(poller, seconds)

    def _stop_blocking_alarm(self):
        """No alarm once the loop has stopped (it would fire outside any pass)."""
        if self._blocking_signal_threshold is not None:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)


class _WatchedPoller(object):
    """A poller that stops the blocking alarm while it waits and starts it again for the
    pass's work: in place of the loop's poller while an alarm is set."""

    def __init__(self, poller, seconds):
        self.unwatched = poller
        self.seconds = seconds
        self.register, self.modify = poller.register, poller.modify
        self.unregister, self.close = poller.unregister, poller.close

    def poll(self, delay):
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        ready = self.unwatched.poll(delay)
        signal.setitimer(signal.ITIMER_REAL, self.seconds, 0)
        return ready
