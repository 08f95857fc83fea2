"""W3 and W4: workloads on the loop's callback and timer API, shared by every implementation.

Each implementation hands in its own bound methods (a `LoopAPI`), so the code that runs
between the loop's calls is byte-for-byte the same for tinytornado, Tornado and asyncio.
"""
from __future__ import absolute_import, division, print_function

import collections

__all__ = ['LoopAPI', 'LoopWorkloads', 'w3_timers', 'w4_callbacks']

# call_later(delay, fn) -> handle; cancel(handle); add_callback(fn); stop();
# run(fn): schedule fn and run the loop until stop() is called.
LoopAPI = collections.namedtuple('LoopAPI', 'call_later cancel add_callback stop run')


def w3_timers(api, delays):
    """Schedule a timer per delay, cancel every other one, run until the rest have fired.

    Returns [fired, wrongly_fired]: a cancelled timer that runs counts as wrongly fired.
    """
    call_later, cancel, stop = api.call_later, api.cancel, api.stop
    expected = len(delays) - len(delays) // 2
    counts = [0, 0]

    def on_timer():
        counts[0] += 1
        if counts[0] == expected:
            stop()

    def on_cancelled_timer():
        counts[1] += 1

    def schedule():
        # Cancel only after every timer exists, as timeouts are cancelled when the
        # operation they guard finishes, not the moment they are set.
        to_cancel = []
        for index, delay in enumerate(delays):
            if index % 2:
                to_cancel.append(call_later(delay, on_cancelled_timer))
            else:
                call_later(delay, on_timer)
        for handle in to_cancel:
            cancel(handle)

    api.run(schedule)
    return counts


def w4_callbacks(api, callbacks):
    """A chain of `callbacks` callbacks, each adding the next; returns how many ran."""
    add_callback, stop = api.add_callback, api.stop
    count = [0]

    def step():
        count[0] += 1
        if count[0] < callbacks:
            add_callback(step)
        else:
            stop()

    api.run(step)
    return count[0]


class LoopWorkloads(object):
    """W3 and W4 as methods, for an implementation class that provides `loop_api()`."""

    def w3_timers(self, delays):
        return w3_timers(self.loop_api(), delays)

    def w4_callbacks(self, callbacks):
        return w4_callbacks(self.loop_api(), callbacks)
