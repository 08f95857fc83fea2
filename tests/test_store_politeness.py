"""One politeness model in every work store: the same tests, parametrized over the
single-process memory store, the SQLite state store (``state``) and Redis (a real
redis-server, tests/redis_server.py), with one or several workers.

- the rate ceiling (``max_rate``) holds over any delay rule, as the test server counts
  the requests of a site that answers at once, in one process and across workers;
- the default politeness is the same over Redis as in one process: an adapted delay, not
  a fixed 1 s, so a crawl of ~100 pages takes a time set by the ceiling;
- URLs that always answer 503 back off on their own: their host's good pages finish at
  the polite rate, and exactly those URLs are broken;
- the URLs of a host given up (refusing connections) are unchecked, with the reason, in
  the statistics, the link checker, ``--link-check`` and the summary; never broken.

Rates are counted from the server's side, in windows, with generous margins: the machine
running the tests may be loaded.
"""
from __future__ import absolute_import, division, print_function

import io
import json
import socket

import pytest

from tinytornado import gen
from tinytornado.crawler.__main__ import main
from tinytornado.crawler.crawloptions import DEFAULT_OPTIONS
from tinytornado.crawler.demosite import Site
from tinytornado.crawler.engine import Crawler, WorkItem
from tinytornado.crawler.frontier import Frontier
from tinytornado.crawler.linkcheck import LinkChecker
from tinytornado.crawler.outputs import CallbackOutput
from tinytornado.crawler.politeness import AutoThrottle, HostHealth, PolitenessRule
from tinytornado.crawler.redisclient import RedisClient
from tinytornado.crawler.redisstore import RedisWorkStore
from tinytornado.crawler.stats import is_unchecked
from tinytornado.ioloop import IOLoop

from crawler_sites import Pages, links, request_log

STORES = ['memory', 'sqlite', 'redis']


@pytest.fixture(params=STORES)
def crawl_in(request, tmpdir, start_redis_server):
    """``crawl_in(roots, workers=1, **options)`` -> a Future of the list of each worker's
    CrawlStatistics, the crawl run in the store of the parameter (several workers: Redis
    only), every worker's URLs told to `crawl_in.checker`, one LinkChecker."""
    kind = request.param
    redis = []
    crawls = []

    @gen.coroutine
    def crawl(roots, workers=1, **options):
        checker = crawl.checker = LinkChecker()
        options.update(on_links=checker.add_links,
                       outputs=[CallbackOutput(checker.add_statistic)])
        crawls.append(None)
        if kind == 'memory':
            assert workers == 1
            crawlers = [Crawler(roots, **options)]
        elif kind == 'sqlite':
            assert workers == 1
            state = str(tmpdir.join('crawl-%d.sqlite' % len(crawls)))
            crawlers = [Crawler(roots, state=state, **options)]
        else:
            if not redis:
                redis.append(start_redis_server())
            crawl_id = 'polite-%d' % len(crawls)
            crawlers = [Crawler(roots, redis=redis[0].url(), crawl_id=crawl_id, **options)
                        for _ in range(workers)]
        results = yield [crawler.crawl() for crawler in crawlers]
        raise gen.Return(results)

    crawl.kind = kind
    return crawl


def most_in_a_second(times):
    """The most requests that arrived within one second of each other."""
    times = sorted(times)
    most, first = 0, 0
    for last, when in enumerate(times):
        while when - times[first] > 1.0:
            first += 1
        most = max(most, last - first + 1)
    return most


def finished(results):
    """{url: statistic} over every worker's statistics."""
    return dict((statistic.url, statistic) for statistics in results
                for statistic in statistics.done)


def numbered_site(count, extra=None):
    pages = dict(('/p%d' % n, '') for n in range(count))
    pages.update(extra or {})
    pages['/'] = links(*sorted(pages))
    return Pages(pages)


@pytest.mark.gen_test(timeout=60)
@pytest.mark.parametrize('delay', [0.0, None])  # fixed 0, and adapted from no delay
def test_the_rate_ceiling_holds_over_any_delay(serve, crawl_in, delay):
    server, origin = serve(numbered_site(24))
    log = request_log(server)
    results = yield crawl_in([origin + '/'], max_rate=8, delay=delay, start_delay=0.0,
                             min_delay=0.0, max_per_host=None, max_tasks=10,
                             obey_robots=False)
    assert len(finished(results)) == 25
    times = [when for _, when in log]
    # 25 requests at 8/s at most: 3 s at least; without the ceiling, a few ms.
    assert max(times) - min(times) >= 24 / 8.0 * 0.8
    assert most_in_a_second(times) <= 8 * 1.5


@pytest.mark.gen_test(timeout=60)
@pytest.mark.parametrize('crawl_in', ['redis'], indirect=True)
@pytest.mark.parametrize('workers', [2, 4])
def test_the_rate_ceiling_holds_across_workers(serve, crawl_in, workers):
    server, origin = serve(numbered_site(24))
    log = request_log(server)
    results = yield crawl_in([origin + '/'], workers=workers, max_rate=8, delay=0.0,
                             max_per_host=None, max_tasks=5, obey_robots=False)
    assert len(finished(results)) == 25
    assert sum(len(statistics.done) for statistics in results) == 25  # each URL once
    times = [when for _, when in log]
    assert max(times) - min(times) >= 24 / 8.0 * 0.8
    assert most_in_a_second(times) <= 8 * 1.5


@pytest.mark.gen_test(timeout=90)
def test_the_default_politeness_is_the_same_in_every_store(serve, crawl_in):
    # The defaults but the ceiling, lifted to 20/s so that the test takes seconds: at
    # that rate ~100 pages take ~5 s; a fixed delay of 1 s (start_delay) would take 100.
    server, origin = serve(Site(seed=3, pages=100))
    log = request_log(server)
    started = IOLoop.current().time()
    results = yield crawl_in([origin + '/'], workers=4 if crawl_in.kind == 'redis' else 1,
                             max_rate=20)
    elapsed = IOLoop.current().time() - started
    count = len(finished(results))
    assert count >= 100
    assert elapsed < count / 20.0 * 3 + 5
    assert most_in_a_second([when for _, when in log]) <= 20 * 1.5
    assert server.peak_active <= 2  # the default cap on requests in flight


def bad_and_good_site():
    """A root linking to 48 good pages and 12 that always answer 503 (one in every five
    links), each good page linking back to the root; the bad paths."""
    pages, order, bad = {}, [], []
    for n in range(60):
        if n % 5 == 4:
            path = '/bad%d' % n
            pages[path] = {'status': 503, 'body': 'busy'}
            bad.append(path)
        else:
            path = '/good%d' % n
            pages[path] = links('/')
        order.append(path)
    pages['/'] = links(*order)
    return Pages(pages), bad


@pytest.mark.gen_test(timeout=90)
def test_urls_that_always_answer_503_back_off_alone(serve, crawl_in):
    site, bad = bad_and_good_site()
    server, origin = serve(site)
    log = request_log(server)
    started = IOLoop.current().time()
    results = yield crawl_in([origin + '/'], workers=2 if crawl_in.kind == 'redis' else 1,
                             max_rate=20, backoff=0.2, obey_robots=False)
    elapsed = IOLoop.current().time() - started
    done = finished(results)
    checker = crawl_in.checker
    assert sorted(link.url for link in checker.broken_links([origin + '/'])) == sorted(
        origin + path for path in bad)
    assert checker.unchecked == {}
    good = [statistic for url, statistic in done.items() if '/good' in url]
    assert len(good) == 48 and set(statistic.status for statistic in good) == set([200])
    assert not [statistic for statistic in done.values() if is_unchecked(statistic)]
    assert set(done[origin + path].tries for path in bad) == set([4])  # max_tries
    # 61 pages and 36 retries at 20/s: ~5 s; a host paused for each 503 (doubling up to
    # 60 s) would take minutes.
    assert elapsed < 30
    assert most_in_a_second([when for _, when in log]) <= 20 * 1.5


@pytest.fixture
def refusing_origin():
    """http://127.0.0.1:PORT of a port that refuses connections while the test runs."""
    bound = socket.socket()
    bound.bind(('127.0.0.1', 0))
    yield 'http://127.0.0.1:%d' % bound.getsockname()[1]
    bound.close()


@pytest.mark.gen_test(timeout=60)
def test_urls_of_a_host_given_up_are_unchecked_not_broken(serve, crawl_in,
                                                          refusing_origin):
    server, origin = serve(numbered_site(3))
    refused = [refusing_origin + '/r%d' % n for n in range(6)]
    yield crawl_in([origin + '/'] + refused, max_host_failures=2, backoff=0.01,
                   max_per_host=1, max_tasks=1, max_rate=0, obey_robots=False)
    checker = crawl_in.checker
    broken = dict((link.url, link.problem) for link in
                  checker.broken_links([origin + '/'] + refused))
    unchecked = checker.unchecked
    # Tried until the host was given up: broken (refused); the others never tried.
    assert broken and unchecked
    assert sorted(list(broken) + list(unchecked)) == sorted(refused)
    assert all('refused' in problem.lower() for problem in broken.values())
    for reason in unchecked.values():
        assert reason.startswith('HostGivenUp: 2 failures in a row on %s' %
                                 refusing_origin.split('//')[1])
        assert 'refused' in reason.lower()  # the host's last failure


def test_link_check_and_summary_list_the_unchecked(serve, refusing_origin, tmpdir, capsys,
                                                   monkeypatch):
    # The command line has no flags for these: the refusing host is given up quickly.
    monkeypatch.setitem(DEFAULT_OPTIONS, 'max_host_failures', 2)
    monkeypatch.setitem(DEFAULT_OPTIONS, 'backoff', 0.01)
    server, origin = serve(numbered_site(2))
    refused = [refusing_origin + '/r%d' % n for n in range(5)]
    summary, report = str(tmpdir.join('summary.json')), str(tmpdir.join('report.html'))
    status = main([origin + '/'] + refused + [
        '--link-check', '--summary', summary, '--report', report, '--no-robots',
        '--max-rate', '0',
        '--max-tasks', '1', '--max-per-host', '1'])
    captured = capsys.readouterr()
    assert status == 1  # the URLs tried and refused are broken
    lines = captured.out.splitlines()
    start = [n for n, line in enumerate(lines) if line.startswith('Unchecked links')][0]
    listed = lines[start + 1:]  # 'URL reason' each, the last lines of stdout
    assert len(listed) == int(lines[start].rsplit(': ', 1)[1]) >= 1
    assert all(line.split()[0] in refused and ' HostGivenUp: ' in line for line in listed)
    broken = lines[[n for n, line in enumerate(lines) if line.startswith('Broken links')][0]:
                   start]
    assert len(broken) > 1 and not [line for line in broken if 'HostGivenUp' in line]
    with open(summary) as f:
        written = json.load(f)
    assert written['unchecked']['urls'] == len(listed)
    assert list(written['unchecked']['hosts']) == [refusing_origin.split('//')[1]]
    with io.open(report, encoding='utf-8') as f:
        html = f.read()
    unchecked_section = html[html.index('Unchecked links'):]
    assert all(line.split()[0] in unchecked_section for line in listed)
    assert 'HostGivenUp' not in html[html.index('Broken links'):html.index('Unchecked links')]


def test_the_politeness_in_force_is_printed_at_the_start(serve, capsys):
    server, origin = serve(numbered_site(1))
    assert main([origin + '/', '--max-rate', '3', '--max-per-host', '4']) == 0
    first = capsys.readouterr().err.splitlines()[0]
    assert first == (
        'tinycrawl: politeness: at most 4 requests in flight per host, a delay adapted to '
        'latency (AutoThrottle: from 1s, 0-10s, 1 in flight) (robots.txt Crawl-delay up to '
        '10s wins), at most 3 requests/s per host')
    assert main([origin + '/', '--delay', '0.5', '--max-rate', '0']) == 0
    assert ', a fixed delay of 0.5s ' in capsys.readouterr().err.splitlines()[0]


def test_a_worker_prints_the_politeness_in_force(serve, start_redis_server, capsys):
    server, origin = serve(numbered_site(1))
    redis = start_redis_server()
    assert main([origin + '/', '--redis', redis.url(), '--crawl-id', 'printed']) == 0
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith('tinycrawl: politeness: at most 2 requests in flight per host, '
                            'a delay adapted to latency')
    assert first.endswith(', at most 5 requests/s per host')


def test_only_failures_across_urls_slow_the_host(io_loop):
    health = HostHealth(Frontier(), backoff=1.0, max_failures=2)
    # One URL answering 503 at every try: its own back-off grows; its host is not slowed.
    assert [health.failed('a:80', tries, 503) for tries in range(4)] == [
        (1.0, False), (2.0, False), (4.0, False), (8.0, False)]
    assert health.failures('a:80') == 0
    # The first tries of different URLs failing in a row: from the third, the host's.
    # (the host's first failure, then the second: given up)
    assert [health.failed('c:80', 0, 503)[1] for _ in range(4)] == [False, False, False, True]
    assert health.failures('c:80') == 2
    health.succeeded('c:80')
    assert health.failures('c:80') == 0 and not health.is_given_up('c:80')
    assert health.failed('c:80', 0, None) == (1.0, False)  # no answer: the host's at once
    assert health.failures('c:80') == 1
    assert health.failed('b:80', 0, 429, retry_after=30.0) == (30.0, False)


def test_redis_adapts_the_delay_by_the_same_rule(start_redis_server, io_loop):
    throttle = AutoThrottle(target_concurrency=2.0, start_delay=1.0, min_delay=0.1,
                            max_delay=3.0)
    rule = PolitenessRule(2, None, throttle, 5.0, 10.0)
    client = RedisClient(start_redis_server().url())
    store = RedisWorkStore(client, 'adapted', WorkItem, politeness=rule.store_settings())
    answers = [(0.2, True), (0.0, True), (5.0, False), (0.4, True), (9.0, True)]
    delay = throttle.start_delay
    try:
        for latency, ok in answers:
            delay = throttle.next_delay(delay, latency, ok)
            io_loop.run_sync(lambda: store.answered('h:80', latency, ok))
            shared = io_loop.run_sync(lambda: client.execute(
                'HGET', store.prefix + 'throttle', 'h:80'))
            assert abs(float(shared) - delay * 1000) < 1.0
    finally:
        client.close()
