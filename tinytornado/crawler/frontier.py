"""The crawl's queue of work: one FIFO per host, served round-robin, with politeness.

A `Frontier` is used like a `queues.Queue` (`put`, `get`, `task_done`, `join`), but `get`
hands out an item only from a host that may be asked now:

- fewer than `max_per_host` of its items are in flight;
- `delay` seconds have passed since the last request to it was sent (the politeness
  delay, raised per host by robots.txt's Crawl-delay through `set_host_delay`), and, if
  it has a delay, no request to it is still on its way out (`request_started`);
- it is not paused (`pause_host`: Retry-After, backoff after failures);
- `min_interval` seconds have passed since the last request to it was sent, whatever its
  delay: the rate ceiling (``1 / max_rate``), which no delay rule goes under.

An item put back for a later try (`put_later`: the back-off of one failing URL) waits
outside its host's queue until it is due, counted as unfinished; its host is served
meanwhile.

Hosts that may be asked wait in a ring; `get` takes one item from the host at the head and
sends that host to the back, so one host with many URLs, or a slow one, cannot take every
worker while others have work. A host that has items but must wait gets one timer for the
moment it may be asked again.

The delay counts from when a request is *sent* (written to its connection), because that
is when the host sees it: a request that must first open a connection goes out later than
it started, and counting from its start would shorten the next gap by the connect time.
Since the next request of a host with a delay may only be handed out once the last one's
sending time is known, a request started and not yet sent holds the host back; one that
ends unsent (its connection failed) counts as sent when it ends. Handing out an item
counts as sending too (the item may make no request), so two hand-outs are spaced as well.

With a `throttle` (`politeness.AutoThrottle`), each host's delay adapts to its latency: the
time from a request's last sending to its answer, told by ``answered()``. A delay set for
a host (robots.txt's Crawl-delay, `set_host_delay`) is fixed from then on.

Invariant: a host is in the ring at most once, and only if it had pending items and room
when it was put there; `get` checks again when it reaches it, since a pause may have come
in between. Items carry their host key as ``item.host``.
"""
from __future__ import absolute_import, division, print_function

import collections

from tinytornado._waiters import Waiters, resolved_future
from tinytornado.ioloop import IOLoop
from tinytornado.locks import Event

__all__ = ['Frontier']


class _Host(object):
    """One host's queue and politeness state."""
    __slots__ = ('key', 'pending', 'active', 'unsent', 'last_sent', 'not_before', 'delay',
                 'adaptive', 'timer', 'in_ring')

    def __init__(self, key, delay, adaptive):
        self.key = key
        self.pending = collections.deque()
        self.active = 0
        self.unsent = 0  # requests started and neither sent nor ended
        self.last_sent = None
        self.not_before = 0.0
        self.delay = delay
        self.adaptive = adaptive  # the throttle may change `delay`
        self.timer = None  # (deadline, handle) of the wake-up, if one is set
        self.in_ring = False

    def ready_time(self, min_interval):
        """The loop time from which the next request may start (ignoring `active` and
        `unsent`), no sooner than `min_interval` after the last one."""
        if self.last_sent is None:
            return self.not_before
        return max(self.not_before, self.last_sent + max(self.delay, min_interval))


class _Sending(object):
    """A request to one host on its way out; made by `Frontier.request_started`."""
    __slots__ = ('frontier', 'host', 'unsent', 'since')

    def __init__(self, frontier, host):
        self.frontier, self.host = frontier, host
        self.unsent = True
        self.since = frontier.io_loop.time()  # the start, then the last sending
        host.unsent += 1

    def sent(self):
        """The request has been written (again, for a redirect or a retry): the host's
        delay counts from now. Fit for the HTTP client's `sent_callback`."""
        self.since = self.frontier.io_loop.time()
        self.frontier._count_delay_from_now(self)

    def ended(self):
        """The request is over, answered or not. If it was never sent, the delay counts
        from now: the host is neither stalled nor asked again at once."""
        if self.unsent:
            self.frontier._count_delay_from_now(self)

    def answered(self, ok):
        """The answer is in (`ok`: a 200): the frontier's throttle, if any, adapts the
        host's delay to the time since the request's last sending (its start if it was
        never sent, as for a connection that timed out)."""
        self.frontier._adapt_delay(self, ok)


class Frontier(object):
    """Per-host queues served round-robin; see the module docstring.

    Args:
        max_per_host: items of one host in flight at once; None for no limit.
        delay: seconds between the sending of two requests to one host; with a
            `throttle`, where each host's delay starts.
        throttle: a `politeness.AutoThrottle` adapting each host's delay, or None.
        min_interval: the least seconds between two requests to one host, whatever its
            delay (the rate ceiling).
    """

    def __init__(self, max_per_host=None, delay=0.0, throttle=None, min_interval=0.0):
        self.max_per_host = max_per_host
        self.delay = delay
        self.throttle = throttle
        self.min_interval = min_interval
        self._later = {}  # id of an item put for later -> its timer
        self.io_loop = IOLoop.current()
        self._hosts = {}
        self._ring = collections.deque()
        self._getters = Waiters()
        self._unfinished = 0
        self._pending = 0
        self._finished = Event()
        self._finished.set()
        self._closed = False

    def qsize(self):
        """The number of items waiting (not counting those handed out)."""
        return self._pending

    def unfinished(self):
        """Items put and not yet marked done: waiting plus in flight."""
        return self._unfinished

    def put(self, item, front=False):
        """Queue `item` behind its host's other items (before them if `front`)."""
        self._unfinished += 1
        self._finished.clear()
        self._queue(item, front)

    def put_later(self, item, seconds):
        """Queue `item` before its host's others once `seconds` have passed; unfinished
        from now."""
        if seconds <= 0:
            self.put(item, front=True)
            return
        self._unfinished += 1
        self._finished.clear()
        key = id(item)
        self._later[key] = self.io_loop.call_later(seconds, self._due, key, item)

    def _due(self, key, item):
        del self._later[key]
        self._queue(item, front=True)

    def _queue(self, item, front):
        host = self._host(item.host)
        if front:
            host.pending.appendleft(item)
        else:
            host.pending.append(item)
        self._pending += 1
        self._schedule(host)
        self._dispatch()

    def get(self):
        """A Future resolved with the next item some host may be asked for."""
        item = self._take()
        if item is not None:
            return resolved_future(item)
        return self._getters.add()

    def task_done(self, item):
        """`item`, handed out by `get`, is finished: its host has a free slot again."""
        host = self._hosts[item.host]
        host.active -= 1
        self._unfinished -= 1
        if self._unfinished == 0:
            self._finished.set()
        self._schedule(host)
        self._dispatch()

    def release_getters(self, value):
        """Resolve every waiting `get` with `value` (None: the crawl has no more work)."""
        for future, _ in self._getters.pop_many(len(self._getters)):
            future.set_result(value)

    def join(self):
        """A Future resolved once every item put has been marked done."""
        return self._finished.wait()

    def request_started(self, key):
        """A request to host `key` is about to be made; returns an object to tell of it.

        Call its ``sent()`` each time the request is written (the HTTP client's
        `sent_callback`), and its ``ended()`` once it is over, however it ended. Until
        the first of them, a host with a delay is asked for nothing more; the delay
        counts from the last ``sent()``, or from ``ended()`` for a request never sent.
        Every request to the host goes through this, the item's own and any other
        (robots.txt), so that the host sees the delay between all of them.
        """
        return _Sending(self, self._host(key))

    def set_host_delay(self, key, delay):
        """Seconds between the sending of two requests to host `key` from now on."""
        host = self._host(key)
        host.delay = delay
        host.adaptive = False
        self._reschedule(host)

    def host_delay(self, key):
        """Seconds between the sending of two requests to host `key` (its delay, or the
        rate ceiling's interval if longer)."""
        return max(self._host(key).delay, self.min_interval)

    def pause_host(self, key, seconds):
        """Ask host `key` for nothing during the next `seconds` (a pause only grows)."""
        host = self._host(key)
        host.not_before = max(host.not_before, self.io_loop.time() + seconds)
        self._reschedule(host)

    def remove_pending(self, key):
        """Take every waiting item of host `key` out of the queue; returns them.

        The caller marks each one done with `task_done` once it has dealt with it.
        """
        host = self._host(key)
        items = list(host.pending)
        host.pending.clear()
        self._pending -= len(items)
        host.active += len(items)  # task_done releases them like handed-out items
        return items

    def pending_items(self):
        """Every waiting item, host by host."""
        for host in self._hosts.values():
            for item in host.pending:
                yield item

    def close(self):
        """Remove the wake-up timers and set no more (a request may end after its crawl
        did: its ``ended()`` must not leave a timer behind); waiting getters are left to
        be cancelled."""
        self._closed = True
        for host in self._hosts.values():
            self._clear_timer(host)
        for timer in self._later.values():
            self.io_loop.remove_timeout(timer)
        self._later.clear()

    def _host(self, key):
        host = self._hosts.get(key)
        if host is None:
            host = self._hosts[key] = _Host(key, self.delay, self.throttle is not None)
        return host

    def _has_room(self, host):
        if host.unsent and (host.delay or self.min_interval):
            return False  # the next turn counts from a sending still to come
        return self.max_per_host is None or host.active < self.max_per_host

    def _schedule(self, host):
        """Put `host` in the ring if it may be asked now, else set its wake-up timer."""
        if self._closed or host.in_ring or not host.pending or not self._has_room(host):
            return
        when = host.ready_time(self.min_interval)
        if when <= self.io_loop.time():
            self._clear_timer(host)
            host.in_ring = True
            self._ring.append(host)
        elif host.timer is None or host.timer[0] != when:
            self._clear_timer(host)
            host.timer = (when, self.io_loop.call_at(when, self._wake, host))

    def _reschedule(self, host):
        # A host already in the ring is checked again when `_take` reaches it.
        self._schedule(host)
        self._dispatch()

    def _count_delay_from_now(self, sending):
        host = sending.host
        host.last_sent = self.io_loop.time()
        if sending.unsent:
            sending.unsent = False
            host.unsent -= 1
        self._reschedule(host)

    def _adapt_delay(self, sending, ok):
        host = sending.host
        if host.adaptive:
            latency = self.io_loop.time() - sending.since
            host.delay = self.throttle.next_delay(host.delay, latency, ok)
            self._reschedule(host)

    def _wake(self, host):
        host.timer = None
        self._schedule(host)
        self._dispatch()

    def _clear_timer(self, host):
        if host.timer is not None:
            self.io_loop.remove_timeout(host.timer[1])
            host.timer = None

    def _take(self):
        """The next item of the first host in the ring that may be asked, or None."""
        now = self.io_loop.time()
        while self._ring:
            host = self._ring.popleft()
            host.in_ring = False
            if (host.pending and self._has_room(host) and
                    host.ready_time(self.min_interval) <= now):
                item = host.pending.popleft()
                self._pending -= 1
                host.active += 1
                host.last_sent = now
                self._schedule(host)  # to the back of the ring, or a timer
                return item
            self._schedule(host)
        return None

    def _dispatch(self):
        """Hand items to waiting getters while some host may be asked."""
        while len(self._getters) and self._ring:
            item = self._take()
            if item is None:
                return
            future, _ = self._getters.pop()
            future.set_result(item)
