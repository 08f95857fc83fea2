"""Politeness beyond the frontier's limits: robots.txt per site, and backing off failing hosts.

`RobotsCache` fetches each site's robots.txt once (the first URL of a site waits for it, the
others share the same Future) and tells the frontier the site's Crawl-delay, capped.
Following RFC 9309: a 4xx robots.txt allows everything; a 5xx one or a failed request is an
error for the URL that asked, which is retried like any failed fetch, and the next URL of
that site asks again.

`HostHealth` turns failures into pauses. A failure backs off its own URL: its next try
waits `backoff` doubled with each try of it (up to `max_backoff`), or its Retry-After if
longer. Only failures that say the host is in trouble slow the host: no answer at all
(refused connection, timeout), or failing answers (429, 502-504) on the first tries of
`HOST_TROUBLE_URLS` different URLs in a row; each of those doubles the host's pause, and a
success ends the streak. So a few URLs that always answer 503 fail on their own while
their host's other pages go on at the polite rate. Errors never make a host be asked
sooner. After `max_failures` host failures in a row the host is given up: its URLs end
unchecked, without a request (`HOST_GIVEN_UP` tells why). A host's streak and what is left
of its pause can be taken (`snapshot`) and given back (`restore`), by a resumed crawl.

`PolitenessRule` is the one place the numbers of the rule live: the per-host cap, the
delay rule (fixed, robots.txt's Crawl-delay, or AutoThrottle), the rate ceiling
(`max_rate`: no two requests to one host closer than ``1 / max_rate`` seconds, whatever
the delay rule says) and the back-off. The frontier applies them in one process; the Redis
store's Lua receives the same numbers from it (`store_settings`), so the two cannot drift.

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
from .stats import HOST_GIVEN_UP

__all__ = ['RobotsCache', 'RobotsUnavailable', 'HostHealth', 'AutoThrottle',
           'PolitenessRule', 'HOST_TROUBLE_URLS']

# Failing answers on the first tries of this many different URLs in a row, with no success
# between, say that the host (not the URLs) is in trouble.
HOST_TROUBLE_URLS = 3


class RobotsUnavailable(Exception):
    """robots.txt could not be read (a 5xx status or a failed request); `transient`: a
    later try may read it (not so after a certificate not trusted); `host_final`: no URL of
    the host can be fetched (that certificate)."""

    def __init__(self, message, transient=True, host_final=False):
        Exception.__init__(self, message)
        self.transient = transient
        self.host_final = host_final


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
        self._keep = set()  # robots.txt URLs whose response a work item will want
        self._kept = {}  # robots.txt URL -> its Fetched, read, until taken

    def keep_responses(self, robots_txts):
        """Keep the response of each of `robots_txts` once read, for `take_response`: a
        work item reading it for its Sitemap lines takes it instead of a second request."""
        self._keep.update(robots_txts)

    def take_response(self, robots_txt):
        """The Fetched (redirects followed) read for `robots_txt` if kept, once; or None."""
        self._keep.discard(robots_txt)
        return self._kept.pop(robots_txt, None)

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
                                    transient=fetched.transient or fetched.status is not None,
                                    host_final=fetched.host_final)
        rules = RobotsRules.for_status(fetched.status, fetched.body)
        if robots_txt in self._keep:
            self._kept[robots_txt] = fetched
        crawl_delay = rules.crawl_delay(self.user_agent, max_delay=self.max_crawl_delay)
        if crawl_delay:
            self.frontier.set_host_delay(host, max(self.delay, crawl_delay))
        raise gen.Return(rules)


@gen.coroutine
def _check(rules_future, url, user_agent):
    rules = yield rules_future
    raise gen.Return(rules.allowed(url, user_agent))


class HostHealth(object):
    """Failures turned into pauses of URLs and of the frontier's hosts; see the module
    docstring.

    Args:
        frontier: the `Frontier` whose hosts are paused.
        backoff: the pause after a first failure, in seconds; it doubles with each one.
        max_backoff: the longest pause for failures; max_retry_after: the longest
            Retry-After honoured.
        max_failures: host failures in a row after which the host is given up (None:
            never).
    """

    def __init__(self, frontier, backoff=1.0, max_backoff=60.0, max_retry_after=300.0,
                 max_failures=None):
        self.frontier = frontier
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.max_failures = max_failures
        self._failures = {}  # host -> host failures in a row
        self._failing_urls = {}  # host -> first tries that failed with an answer, in a row
        self._last_failure = {}  # host -> what its last host failure was
        self._pause_ends = {}  # host -> loop time its last pause for failures ends
        self._final = {}  # host -> the failure every URL of it would meet (given up)

    def succeeded(self, host):
        self._failures.pop(host, None)
        self._failing_urls.pop(host, None)
        self._pause_ends.pop(host, None)

    def failed(self, host, tries, status=None, retry_after=None, cause=None):
        """Count a failed try of a URL of `host` (made after `tries` others; `status`
        None when no answer came). Returns (seconds before the URL's next try, True if
        the host is now given up)."""
        url_pause = self._pause_for(tries + 1, retry_after)
        if status is not None:
            if tries:
                return url_pause, False  # the URL's own trouble, counted on its first try
            failing = self._failing_urls[host] = self._failing_urls.get(host, 0) + 1
            if failing < HOST_TROUBLE_URLS:
                return url_pause, False
        failures = self._failures[host] = self._failures.get(host, 0) + 1
        self._last_failure[host] = cause
        self._pause(host, self._pause_for(failures, retry_after))
        return url_pause, self.is_given_up(host)

    def give_up(self, host, cause):
        """Give `host` up at once: `cause`, a failure of one URL, is every URL's (a
        certificate not trusted). Not journaled: a resume tries the host once again."""
        self._final[host] = cause

    def _pause_for(self, failures, retry_after):
        pause = min(self.backoff * 2 ** (failures - 1), self.max_backoff)
        if retry_after is not None:
            pause = max(pause, min(retry_after, self.max_retry_after))
        return pause

    def is_given_up(self, host):
        return host in self._final or (self.max_failures is not None and
                                       self._failures.get(host, 0) >= self.max_failures)

    def failures(self, host):
        return self._failures.get(host, 0)

    def given_up(self, host):
        """Why the URLs of given-up `host` are left unchecked (a statistic's exception)."""
        final = self._final.get(host)
        if final is not None:
            return '%s: %s given up at its first failure, final for every URL: %s' % (
                HOST_GIVEN_UP, host, final)
        last = self._last_failure.get(host)
        return '%s: %d failures in a row on %s%s' % (
            HOST_GIVEN_UP, self.failures(host), host, ', the last: %s' % last if last else '')

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


class PolitenessRule(object):
    """The politeness of a crawl, decided once: what every store applies, the same.

    Args:
        max_per_host: requests in flight to one host (None: no cap).
        delay: fixed seconds between two requests to one host, or None for AutoThrottle's.
        throttle: the `AutoThrottle` when `delay` is None.
        max_rate: the most requests per second to one host, whatever the delay (a
            ceiling); 0 or None: none.
        max_crawl_delay: the longest robots.txt Crawl-delay honoured.
    """

    def __init__(self, max_per_host, delay, throttle, max_rate, max_crawl_delay):
        self.max_per_host = max_per_host
        self.delay = delay
        self.throttle = throttle
        self.max_rate = max_rate or None
        self.min_interval = 1.0 / max_rate if max_rate else 0.0
        self.max_crawl_delay = max_crawl_delay

    def start_delay(self):
        """A host's delay before anything is known of it."""
        return self.delay if self.throttle is None else self.throttle.start_delay

    def store_settings(self):
        """The rule's numbers in milliseconds (a JSON object for the Redis store's Lua):
        ``delay`` (fixed, or -1 for the throttle's), ``floor`` (the ceiling's least gap),
        and the throttle's ``start``, ``min``, ``max`` and ``target``."""
        throttle = self.throttle or AutoThrottle()
        return dict(delay=-1 if self.delay is None else _ms(self.delay),
                    floor=_ms(self.min_interval), start=_ms(throttle.start_delay),
                    min=_ms(throttle.min_delay), max=_ms(throttle.max_delay),
                    target=throttle.target_concurrency)

    def describe(self):
        """The rule in one line, for the start of a crawl."""
        cap = ('at most %d requests in flight per host' % self.max_per_host
               if self.max_per_host else 'no cap on requests in flight per host')
        if self.throttle is None:
            delay = 'a fixed delay of %gs' % self.delay
        else:
            delay = ('a delay adapted to latency (AutoThrottle: from %gs, %g-%gs, %g in '
                     'flight)' % (self.throttle.start_delay, self.throttle.min_delay,
                                  self.throttle.max_delay, self.throttle.target_concurrency))
        ceiling = ('at most %g requests/s per host' % self.max_rate if self.max_rate
                   else 'no rate ceiling')
        return 'politeness: %s, %s (robots.txt Crawl-delay up to %gs wins), %s' % (
            cap, delay, self.max_crawl_delay, ceiling)


def _ms(seconds):
    return int(round(seconds * 1000))
