"""Politeness beyond the frontier's limits: robots.txt per site, and backing off failing hosts.

`RobotsCache` fetches each site's robots.txt once (the first URL of a site waits for it, the
others share the same Future) and tells the frontier the site's Crawl-delay, capped.
Following RFC 9309: a 4xx robots.txt allows everything; a 5xx one or a failed request is an
error for the URL that asked, which is retried like any failed fetch, and the next URL of
that site asks again.

`HostHealth` turns failures into pauses: each failure in a row doubles the host's pause
(from `backoff` up to `max_backoff`), a Retry-After can only lengthen it, and a success
ends the streak. Errors never make a host be asked sooner. After `max_failures` failures in
a row the host is given up: its URLs fail without a request. A host's streak and what is
left of its pause can be taken (`snapshot`) and given back (`restore`), by a resumed crawl.

`AutoThrottle` is the rule of Scrapy's extension of that name, which adapts a host's delay
to how long it takes to answer: a server that needs `latency` seconds per request serves
`target_concurrency` of them at once if sent one every ``latency / target_concurrency``
seconds. Each answer moves the delay halfway to that target, within bounds; an answer that
is not a 200 may only lengthen it, since errors often come faster than pages and a crawler
that sped up on them would press a server that is already failing.
"""
from __future__ import absolute_import, division, print_function

import functools

from tinytornado import gen
from tinytornado._waiters import resolved_future

from .robots import RobotsRules, robots_url

__all__ = ['RobotsCache', 'RobotsUnavailable', 'HostHealth', 'AutoThrottle']


class RobotsUnavailable(Exception):
    """robots.txt could not be read (a 5xx status or a failed request); `transient`: a
    later try may read it (not so after a certificate not trusted)."""

    def __init__(self, message, transient=True):
        Exception.__init__(self, message)
        self.transient = transient


class RobotsCache(object):
    """The robots.txt rules of each site (scheme, host and port) the crawl visits.

    Args:
        fetcher: a `fetch.Fetcher`.
        frontier: told each host's Crawl-delay (`set_host_delay`).
        user_agent: the name matched against User-agent lines.
        delay: the crawl's own politeness delay, the least a host gets.
        max_crawl_delay: the longest Crawl-delay honoured, in seconds.
    """

    def __init__(self, fetcher, frontier, user_agent, delay=0.0, max_crawl_delay=10.0):
        self.fetcher = fetcher
        self.frontier = frontier
        self.user_agent = user_agent
        self.delay = delay
        self.max_crawl_delay = max_crawl_delay
        self._rules = {}  # robots.txt URL -> Future of its RobotsRules

    def has_rules(self, url):
        """True if the robots.txt of the site of `url` has been read."""
        future = self._rules.get(robots_url(url))
        return future is not None and future.done()

    def allowed(self, url, host):
        """A Future of True if robots.txt lets the crawl fetch `url` (of frontier `host`).

        Raises (through the Future):
            RobotsUnavailable: robots.txt could not be read.
        """
        robots_txt = robots_url(url)
        future = self._rules.get(robots_txt)
        if future is None:
            future = self._rules[robots_txt] = self._load(robots_txt, host)
            future.add_done_callback(functools.partial(self._forget_failure, robots_txt))
        elif future.done():  # read already (a failure is forgotten as it happens)
            return resolved_future(future.result().allowed(url, self.user_agent))
        return _check(future, url, self.user_agent)

    def _forget_failure(self, robots_txt, future):
        # The next URL of the site asks again.
        if future.cancelled() or future.exception() is not None:
            if self._rules.get(robots_txt) is future:
                del self._rules[robots_txt]

    @gen.coroutine
    def _load(self, robots_txt, host):
        fetched = yield self.fetcher.fetch(robots_txt, follow_redirects=True,
                                           download_non_html=True,
                                           sending=self.frontier.request_started(host))
        if fetched.status is None or fetched.status >= 500 or fetched.status == 429:
            raise RobotsUnavailable('robots.txt: %s' % (fetched.exception or
                                                        'HTTP %d' % fetched.status),
                                    transient=fetched.transient or fetched.status is not None)
        rules = RobotsRules.for_status(fetched.status, fetched.body)
        crawl_delay = rules.crawl_delay(self.user_agent, max_delay=self.max_crawl_delay)
        if crawl_delay:
            self.frontier.set_host_delay(host, max(self.delay, crawl_delay))
        raise gen.Return(rules)


@gen.coroutine
def _check(rules_future, url, user_agent):
    rules = yield rules_future
    raise gen.Return(rules.allowed(url, user_agent))


class HostHealth(object):
    """Consecutive failures per host, turned into pauses of the frontier's hosts.

    Args:
        frontier: the `Frontier` whose hosts are paused.
        backoff: the pause after a first failure, in seconds; it doubles with each one.
        max_backoff: the longest pause for failures; max_retry_after: the longest
            Retry-After honoured.
        max_failures: failures in a row after which the host is given up (None: never).
    """

    def __init__(self, frontier, backoff=1.0, max_backoff=60.0, max_retry_after=300.0,
                 max_failures=None):
        self.frontier = frontier
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.max_failures = max_failures
        self._failures = {}
        self._pause_ends = {}  # host -> loop time its last pause for failures ends

    def succeeded(self, host):
        self._failures.pop(host, None)
        self._pause_ends.pop(host, None)

    def failed(self, host, retry_after=None):
        """Count a failure of `host` and pause it; True if the host is now given up."""
        failures = self._failures[host] = self._failures.get(host, 0) + 1
        pause = min(self.backoff * 2 ** (failures - 1), self.max_backoff)
        if retry_after is not None:
            pause = max(pause, min(retry_after, self.max_retry_after))
        self._pause(host, pause)
        return self.is_given_up(host)

    def is_given_up(self, host):
        return self.max_failures is not None and self._failures.get(host, 0) >= self.max_failures

    def failures(self, host):
        return self._failures.get(host, 0)

    def snapshot(self, host):
        """(failures in a row, seconds left of its pause for them) of `host`."""
        left = self._pause_ends.get(host, 0.0) - self.frontier.io_loop.time()
        return self.failures(host), max(0.0, left)

    def restore(self, host, failures, pause):
        """Take back a `snapshot` of `host`: its streak (given up if long enough), and
        its pause, from now."""
        if failures:
            self._failures[host] = failures
        if pause > 0:
            self._pause(host, pause)

    def _pause(self, host, pause):
        self.frontier.pause_host(host, pause)
        self._pause_ends[host] = self.frontier.io_loop.time() + pause

class AutoThrottle(object):
    """The delay of a host adapted to its latency; see the module docstring.

    Args:
        target_concurrency: the requests in flight to one host to aim for, on average.
        start_delay: a host's delay before any answer came, in seconds.
        min_delay, max_delay: the bounds of the delay, in seconds.

    Raises:
        ValueError: a bound is negative, `max_delay` is below `min_delay`, or
            `target_concurrency` is not above 0.
    """

    def __init__(self, target_concurrency=1.0, start_delay=1.0, min_delay=0.0, max_delay=10.0):
        if not target_concurrency > 0:
            raise ValueError('target_concurrency must be above 0')
        if not 0 <= min_delay <= max_delay or start_delay < 0:
            raise ValueError('delays must be 0 or more, and min_delay at most max_delay')
        self.target_concurrency = target_concurrency
        self.start_delay = min(max(start_delay, min_delay), max_delay)
        self.min_delay = min_delay
        self.max_delay = max_delay

    def next_delay(self, delay, latency, ok):
        """The delay after an answer that took `latency` seconds; `ok`: it was a 200."""
        target = latency / self.target_concurrency
        new_delay = min(max((delay + target) / 2.0, self.min_delay), self.max_delay)
        if not ok:
            return max(new_delay, delay)
        return new_delay
