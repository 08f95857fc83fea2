"""What the crawler does beyond the chapter to be a polite guest: robots.txt, per-host limits
and delays, Retry-After, backoff that never speeds up, failing hosts paused and given up,
and a frontier that takes turns between hosts.

Times are read on the server's side (`request_log`), as the host being protected sees them.
"""
from __future__ import absolute_import, division, print_function

import socket

from tinytornado import gen
from tinytornado.crawler.demo.website import Site
from tinytornado.crawler.engine import Crawler
from tinytornado.crawler.stats import ROBOTS_DISALLOWED
from tinytornado.httpclient import AsyncHTTPClient
from tinytornado.netutil import Resolver

from crawler_sites import (
    FlakyServer, Pages, by_url, links, request_log, robots_txt, unthrottled,
)

# Loop timers fire at their deadline or a little later, never earlier; the slack covers the
# server reading the time a moment before the client's timer would.
SLACK = 0.01
# A crawl's first request, the first on a connection to a server just started, has been
# seen reaching the server's handler some 20 ms after the crawler wrote it, on a loaded
# machine and with either loop: the gap after it is checked with this slack instead.
FIRST_SLACK = 0.04


@gen.coroutine
def crawl(roots, **options):
    statistics = yield Crawler(roots, **unthrottled(options)).crawl()
    raise gen.Return(statistics)


def gaps(log, paths):
    """The times between successive requests for `paths`, as the server saw them arrive."""
    times = [when for path, when in log if path in paths]
    return [later - earlier for earlier, later in zip(times, times[1:])]


def numbered_pages(count, page=''):
    """{'/p0': page, ...} and a root linking to them all."""
    pages = dict(('/p%d' % n, page) for n in range(count))
    pages['/'] = links(*sorted(pages))
    return pages


def test_robots_txt_is_obeyed_by_default(serve):
    site = Site(seed=0, pages=30)
    server, origin = serve(site)
    statistics = yield crawl([origin + '/'])
    assert not [path for path in server.requests if path.startswith('/private/') and
                not path.startswith('/private/open/')]
    assert [path for path in server.requests if path.startswith('/private/open/')]
    disallowed = [url for url, statistic in by_url(statistics).items()
                  if statistic.exception == ROBOTS_DISALLOWED]
    assert disallowed and all('/private/' in url for url in disallowed)
    assert statistics.counters['robots_disallowed'] == len(disallowed)
    assert 'fail' not in statistics.counters


def test_robots_txt_can_be_ignored(serve):
    server, origin = serve(Site(seed=0, pages=30))
    yield crawl([origin + '/'], obey_robots=False)
    assert '/robots.txt' not in server.requests
    assert [path for path in server.requests if path.startswith('/private/0')]


def test_the_user_agent_chooses_the_robots_group(serve):
    pages = {'/robots.txt': robots_txt('User-agent: mybot\nDisallow: /secret\n'),
             '/': links('/secret', '/open'), '/secret': '', '/open': ''}
    server, origin = serve(Pages(pages))
    yield crawl([origin + '/'], user_agent='MyBot/2.0 (+http://example.com/bot)')
    assert '/secret' not in server.requests and '/open' in server.requests
    other, other_origin = serve(Pages(pages))
    yield crawl([other_origin + '/'])
    assert '/secret' in other.requests


def test_a_failing_robots_txt_is_retried_before_its_url_is_fetched(serve):
    site = Pages({'/robots.txt': [{'status': 503}, robots_txt('User-agent: *\n'
                                                              'Disallow: /no\n')],
                  '/': links('/no', '/yes'), '/no': '', '/yes': ''})
    server, origin = serve(site)
    statistics = yield crawl([origin + '/'], backoff=0.01)
    assert server.requests.count('/robots.txt') == 2
    assert by_url(statistics)[origin + '/'].tries == 2
    assert '/no' not in server.requests


def test_crawl_delay_spaces_the_requests(serve):
    pages = numbered_pages(4)
    pages['/robots.txt'] = robots_txt('User-agent: *\nCrawl-delay: 0.1\n')
    server, origin = serve(Pages(pages))
    log = request_log(server)
    yield crawl([origin + '/'], max_tasks=4)
    # Every request waits for its turn, the root's too, though it was taken before
    # robots.txt told the delay.
    after_robots_txt, others = gaps(log, pages)[0], gaps(log, pages)[1:]
    assert after_robots_txt >= 0.1 - FIRST_SLACK
    assert len(others) == 4 and min(others) >= 0.1 - SLACK


class SlowResolver(Resolver):
    """Resolves names after `delay` seconds: every new connection is that slow to open."""

    def __init__(self, delay):
        super(SlowResolver, self).__init__()
        self.delay = delay
        self.resolved = 0

    @gen.coroutine
    def resolve(self, host, port, family=socket.AF_UNSPEC):
        yield gen.sleep(self.delay)
        self.resolved += 1
        addresses = yield super(SlowResolver, self).resolve(host, port, family)
        raise gen.Return(addresses)


def test_crawl_delay_counts_from_when_a_request_goes_out(serve):
    # A request that must open a connection first reaches the server late; the next one,
    # sent on a pooled connection, must still come the whole delay after it (counted
    # from the start of the request, it came 0.08 s early). Here robots.txt opens the
    # first connection, and /p1 a second one, as /p0 is slow to answer and holds the first.
    pages = numbered_pages(3)
    pages['/p0'] = {'body': '', 'delay': 0.15}
    pages['/robots.txt'] = robots_txt('User-agent: *\nCrawl-delay: 0.1\n')
    server, origin = serve(Pages(pages))
    log = request_log(server)
    resolver = SlowResolver(0.08)
    client = AsyncHTTPClient(force_instance=True, resolver=resolver)
    try:
        yield crawl([origin + '/'], max_tasks=4, http_client=client)
    finally:
        client.close()
    assert [path for path, _ in log] == ['/robots.txt', '/', '/p0', '/p1', '/p2']
    assert resolver.resolved >= 2
    after_robots_txt, others = gaps(log, pages)[0], gaps(log, pages)[1:]
    assert after_robots_txt >= 0.1 - FIRST_SLACK and min(others) >= 0.1 - SLACK


def test_crawl_delay_is_capped(serve):
    pages = numbered_pages(4)
    pages['/robots.txt'] = robots_txt('User-agent: *\nCrawl-delay: 100\n')
    server, origin = serve(Pages(pages))
    log = request_log(server)
    yield crawl([origin + '/'], max_tasks=4, max_crawl_delay=0.05)
    paths = set(pages) - set(['/robots.txt'])  # the crawl's first request: see FIRST_SLACK
    assert len(gaps(log, paths)) == 4
    assert 0.05 - SLACK <= min(gaps(log, paths)) and max(gaps(log, paths)) < 1


def test_politeness_delay(serve):
    pages = numbered_pages(4)
    server, origin = serve(Pages(pages))
    log = request_log(server)
    yield crawl([origin + '/'], max_tasks=5, delay=0.05, obey_robots=False)
    paths = set(pages) - set(['/'])  # the crawl's first request: see FIRST_SLACK
    assert len(gaps(log, paths)) == 3
    assert min(gaps(log, paths)) >= 0.05 - SLACK


def test_concurrency_limit_per_host(serve):
    server, origin = serve(Pages(numbered_pages(8, {'body': '', 'delay': 0.03})))
    statistics = yield crawl([origin + '/'], max_tasks=10, max_per_host=2)
    assert statistics.urls == 9
    assert server.peak_active == 2


def test_retry_after_is_honoured_up_to_its_cap(serve):
    busy = {'status': 503, 'headers': [('Retry-After', '1')], 'body': 'busy'}
    server, origin = serve(Pages({'/': links('/busy'), '/busy': [busy, 'ok']}))
    log = request_log(server)
    statistics = yield crawl([origin + '/'], backoff=0.01, max_retry_after=0.3)
    assert by_url(statistics)[origin + '/busy'].status == 200
    assert by_url(statistics)[origin + '/busy'].tries == 2
    [gap] = gaps(log, ['/busy'])
    assert 0.3 - SLACK <= gap < 0.9


def test_429_is_retried_after_a_pause(serve):
    limited = {'status': 429, 'body': 'slow down'}
    server, origin = serve(Pages({'/': links('/api'), '/api': [limited, limited, 'ok']}))
    log = request_log(server)
    statistics = yield crawl([origin + '/'], backoff=0.05, obey_robots=False)
    assert (by_url(statistics)[origin + '/api'].status, by_url(statistics)[origin + '/api'].tries
            ) == (200, 3)
    first, second = gaps(log, ['/api'])
    assert first >= 0.05 - SLACK and second >= 0.1 - SLACK


def test_backoff_grows_with_each_failure_in_a_row(serve):
    site = Pages({'/': links('/flaky'), '/flaky': 'ok'})
    server, origin = serve(site, FlakyServer, failures={'/flaky': 3})
    log = request_log(server)
    statistics = yield crawl([origin + '/'], backoff=0.04, max_tries=4, obey_robots=False)
    assert by_url(statistics)[origin + '/flaky'].tries == 4
    waits = gaps(log, ['/flaky'])
    assert [wait >= expected - SLACK for wait, expected in zip(waits, [0.04, 0.08, 0.16])
            ] == [True, True, True]


def test_a_failing_host_is_paused_for_all_its_urls(serve):
    site = Pages({'/': links('/a', '/b', '/c'), '/a': '', '/b': '', '/c': ''})
    server, origin = serve(site, FlakyServer, failures={'/a': 1})
    log = request_log(server)
    yield crawl([origin + '/'], backoff=0.1, max_tasks=1, obey_robots=False)
    failed_at = [when for path, when in log if path == '/a'][0]
    later = [when for path, when in log if when > failed_at]
    assert len(later) == 3  # /a again, /b, /c: none during the pause
    assert min(later) >= failed_at + 0.1 - SLACK


def test_a_host_failing_too_often_is_given_up(serve):
    pages = numbered_pages(10)
    failures = dict((path, None) for path in pages if path != '/')
    server, origin = serve(Pages(pages), FlakyServer, failures=failures)
    statistics = yield crawl([origin + '/'], backoff=0.0, max_tries=2, max_tasks=1,
                             max_host_failures=3, obey_robots=False)
    assert len([path for path in server.requests if path.startswith('/p')]) == 3
    assert statistics.urls == 11
    given_up = [s for s in statistics.done if (s.exception or '').startswith('HostGivenUp')]
    assert len(given_up) == 8
    # The 8 never tried are unchecked, not failed: nothing is known of those URLs.
    assert (statistics.counters['fail'], statistics.counters['unchecked']) == (2, 8)


def test_the_frontier_takes_turns_between_hosts(serve):
    log = []
    origins = []
    for name in 'ab':
        pages = dict(('/%s%d' % (name, n), '') for n in range(5))
        pages['/'] = links(*sorted(pages))
        server, origin = serve(Pages(pages))
        server.on_request = log.append
        origins.append(origin + '/')
    yield crawl(origins, max_tasks=1, obey_robots=False)
    hosts = [path[1] for path in log if path != '/']
    assert hosts == list('ababababab')
