"""What the crawl may ask of each host, and when: the one object the Crawler asks.

A `HostPolicy` gathers the crawl's politeness: the per-host cap and delay (fixed, or
adapted by `politeness.AutoThrottle`), which it gives the work store's queue of hosts
(`frontier_settings`); robots.txt and its Crawl-delay (`politeness.RobotsCache`, read
through the crawl's fetcher once the crawl starts); failures turned into pauses, with
Retry-After and backoff, and hosts given up (`politeness.HostHealth`); the rate ceiling
and the rest of the rule's numbers, decided once (`politeness.PolitenessRule`). The Crawler asks
it before a try (`refusal`, `robots_verdict`) and tells it how a try went (`failed`,
`succeeded`); the hosts it pauses or slows are the work store's (`attach`): a frontier's,
or a shared store's, whose requests and delays are counted by the store itself.
"""
from __future__ import absolute_import, division, print_function

from tinytornado import gen

from .fetch import describe_exception, retry_after_seconds
from .politeness import AutoThrottle, HostHealth, PolitenessRule, RobotsCache
from .stats import ROBOTS_DISALLOWED

__all__ = ['HostPolicy', 'Failure', 'Refused', 'PutBack', 'PUT_BACK']


class Failure(object):
    """A try that failed before its request (robots.txt could not be read); `transient`
    unless robots.txt never will be, `host_final` if no URL of the host can be fetched
    (its certificate is not trusted)."""
    status = None
    headers = None

    def __init__(self, exception, transient=True, host_final=False):
        self.exception = exception
        self.transient = transient
        self.host_final = host_final


class Refused(object):
    """A try the crawl refused to make (robots.txt disallows it, or a given-up host);
    `tried`: counted as a try (robots.txt was read for it), not so for a given-up host's."""

    def __init__(self, exception, tried=True):
        self.exception = exception
        self.tried = tried


class PutBack(object):
    """A try that did not happen: the item goes back to the work store for its host's
    turn (`PUT_BACK`, its one instance)."""
    __slots__ = ()


PUT_BACK = PutBack()


class HostPolicy(object):
    """The politeness of a crawl with `options` (`crawloptions.OptionValues`).

    Raises:
        ValueError: AutoThrottle's bounds are impossible.
    """

    def __init__(self, options):
        self.max_per_host = options.max_per_host
        self.obey_robots = options.obey_robots
        self.user_agent = options.user_agent
        self.max_crawl_delay = options.max_crawl_delay
        if options.delay is None:
            self.throttle = AutoThrottle(options.target_concurrency, options.start_delay,
                                         options.min_delay, options.max_delay)
            self.least_delay = options.min_delay  # what a Crawl-delay cannot go under
        else:
            self.throttle = None
            self.least_delay = options.delay
        self.rule = PolitenessRule(options.max_per_host, options.delay, self.throttle,
                                   options.max_rate, options.max_crawl_delay)
        self.delay = self.rule.start_delay()
        self._health_settings = (options.backoff, options.max_backoff,
                                 options.max_retry_after, options.max_host_failures)
        self.hosts = self.health = self.robots = None

    def frontier_settings(self):
        """(max_per_host, delay, throttle, min_interval): the `frontier.Frontier` of this
        policy."""
        return self.max_per_host, self.delay, self.throttle, self.rule.min_interval

    def describe(self):
        """The politeness in force, in one line (printed at the start of a crawl)."""
        return self.rule.describe()

    def attach(self, hosts):
        """Pause and slow `hosts` (a `frontier.Frontier`, or what stands for a shared
        store's hosts) from now on."""
        self.hosts = hosts
        self.health = HostHealth(hosts, *self._health_settings)

    def start(self, fetcher):
        """Read robots.txt through `fetcher` (a `fetch.Fetcher`) from now on."""
        self.robots = RobotsCache(fetcher, self.hosts, self.user_agent, self.least_delay,
                                  self.max_crawl_delay)

    def keep_robots_responses(self, robots_txts):
        """The work items of `robots_txts` (read for their sitemaps) will take the response
        read for politeness (`robots_response`): robots.txt is fetched once."""
        if self.obey_robots:
            self.robots.keep_responses(robots_txts)

    # -- before a try ---------------------------------------------------------------------

    def robots_response(self, robots_txt):
        """The Fetched of `robots_txt` read already for politeness, once, or None."""
        return self.robots.take_response(robots_txt)

    def refusal(self, item):
        """A Refused if the item's host was given up, else None."""
        if self.health.is_given_up(item.host):
            return Refused(self.given_up(item.host), tried=False)
        return None

    @gen.coroutine
    def robots_verdict(self, item):
        """None if robots.txt lets the crawl fetch `item` now; else a Refused, a Failure
        (robots.txt unavailable), or PUT_BACK (the item must go back to the store for its
        host's turn)."""
        had_rules = self.robots.has_rules(item.url)
        try:
            allowed = yield self.robots.allowed(item.url, item.host)
        except gen.CancelledError:
            raise
        except Exception as e:  # robots.txt unavailable: a failure that may pass
            raise gen.Return(Failure(describe_exception(e), getattr(e, 'transient', True),
                                     getattr(e, 'host_final', False)))
        if not allowed:
            raise gen.Return(Refused(ROBOTS_DISALLOWED))
        if not had_rules and self.hosts.host_delay(item.host):
            # robots.txt was just read, for this item, and the host wants a delay (from
            # it, or from the crawl's own): back to the store for a turn.
            raise gen.Return(PUT_BACK)
        raise gen.Return(None)

    # -- after a try ----------------------------------------------------------------------

    def failed(self, item, fetched):
        """Count a failed try of `item` (its answer `fetched`, Retry-After honoured):
        (seconds before its next try, True if its host is now given up)."""
        retry_after = fetched.headers and retry_after_seconds(fetched.headers)
        cause = fetched.exception or 'HTTP %d' % fetched.status
        return self.health.failed(item.host, item.tries, fetched.status, retry_after or None,
                                  cause)

    def succeeded(self, host):
        self.health.succeeded(host)

    def give_up(self, host, cause):
        """Give `host` up now: `cause` (a certificate not trusted) is final for all of it."""
        self.health.give_up(host, cause)

    def is_given_up(self, host):
        return self.health.is_given_up(host)

    def failures(self, host):
        return self.health.failures(host)

    def given_up(self, host):
        """The exception text of a URL of given-up `host`: unchecked, with the reason."""
        return self.health.given_up(host)
