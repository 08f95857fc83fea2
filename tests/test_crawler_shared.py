"""The crawler over a shared work store in a real redis-server (tests/redis_server.py):
one crawl through Redis gets what the in-memory crawl gets; two Crawlers, each with a
store and a client of its own (two workers), share one crawl, each URL once, within the
per-host cap as the test server counts it, and each worker's robots.txt spaced from the
pages by the crawl's delay or the Crawl-delay, as the test server sees the requests
arrive; a joining command line that contradicts the crawl's options exits 2; a command
line whose fetch outlives its lease ends normally.
"""
from __future__ import absolute_import, division, print_function

import io
import json

import pytest

from tinytornado.crawler.application.cli import EXIT_USAGE, main
from tinytornado.crawler.demo.website import Site
from tinytornado.crawler.engine import Crawler, WorkItem
from tinytornado.crawler.redisclient import RedisClient
from tinytornado.crawler.redisstore import RedisWorkStore
from tinytornado.crawler.workstore import SharedWorkStore

from crawler_sites import (
    UNTHROTTLED, UNTHROTTLED_ARGS, Pages, links, request_log, robots_txt, unthrottled,
)
from test_crawler_cli import start_crawl, wait_for, waits_for_processes

# Hand-outs are spaced on Redis's clock, requests arrive a little after them: the gaps
# the server sees may fall short of the delay by that little.
TOLERANCE = 0.9


def statuses(statistics):
    return dict((statistic.url, statistic.status) for statistic in statistics.done)


def urls(statistics):
    return sorted(statistic.url for statistic in statistics.done)


@pytest.fixture
def shared_stores(start_redis_server, io_loop):
    """``shared_stores(crawl_id, n)`` -> n SharedWorkStores of one crawl, each on a client
    of its own (a worker process each), of one redis-server."""
    server, clients = [], []

    def make(crawl_id, n):
        if not server:
            server.append(start_redis_server())
        new = [RedisClient(server[0].url(), backoff_base=0.01) for _ in range(n)]
        clients.extend(new)
        return [SharedWorkStore(client, crawl_id, WorkItem) for client in new]
    yield make
    for client in clients:
        client.close()


@pytest.mark.gen_test(timeout=60)
def test_a_crawl_through_redis_gets_the_in_memory_crawl(serve, start_redis_server):
    server, origin = serve(Site(seed=3, pages=60))
    alone = yield Crawler([origin + '/'], max_tasks=5, **UNTHROTTLED).crawl()
    redis = start_redis_server()
    shared = yield Crawler([origin + '/'], redis=redis.url(), crawl_id='one', max_tasks=5,
                           **UNTHROTTLED).crawl()
    assert len(alone.done) > 60
    assert statuses(shared) == statuses(alone)
    assert shared.urls == alone.urls and shared.todo == 0


@pytest.mark.gen_test(timeout=60)
def test_a_task_finishes_a_url_and_leases_the_next_in_one_round_trip(serve, shared_stores,
                                                                    monkeypatch):
    server, origin = serve(Site(seed=3, pages=30))
    store, = shared_stores('trips', 1)
    calls = []
    run = RedisWorkStore._run
    monkeypatch.setattr(RedisWorkStore, '_run',
                        lambda self, name, *rest: calls.append(name) or run(self, name, *rest))
    statistics = yield Crawler([origin + '/'], store=store, max_tasks=1,
                               **UNTHROTTLED).crawl()
    assert statistics.urls > 30
    # The first lease, then one exchange a URL: its finish and the next lease (two, were
    # the lease asked for after the finish's reply).
    assert statistics.urls < calls.count('exchange') <= statistics.urls + 1


@pytest.mark.gen_test(timeout=60)
def test_two_workers_share_a_crawl_each_url_once(serve, shared_stores):
    # Slow pages, one task each: each worker holds a lease while the other asks for one.
    site = Site(seed=4, pages=30, slow_fraction=1.0, slow_delay=0.02)
    server, origin = serve(site)
    alone = yield Crawler([origin + '/'], **UNTHROTTLED).crawl()
    first, second = [Crawler([origin + '/'], store=store, max_tasks=1, **UNTHROTTLED)
                     for store in shared_stores('two', 2)]
    one, other = yield [first.crawl(), second.crawl()]
    assert urls(one) and urls(other)
    assert sorted(urls(one) + urls(other)) == urls(alone)


@pytest.mark.gen_test(timeout=60)
def test_the_per_host_cap_holds_across_workers(serve, shared_stores):
    site = Site(seed=5, pages=30, slow_fraction=1.0, slow_delay=0.02)
    server, origin = serve(site)
    crawlers = [Crawler([origin + '/'], store=store, max_tasks=4,
                        **unthrottled(dict(max_per_host=2)))
                for store in shared_stores('capped', 3)]
    results = yield [crawler.crawl() for crawler in crawlers]
    everything = sum((urls(statistics) for statistics in results), [])
    assert len(everything) == len(set(everything)) > 30
    assert server.peak_active == 2


def spaced_site(robots):
    """A root linking to three pages, and robots.txt `robots`."""
    pages = dict(('/p%d' % n, '') for n in range(3))
    pages['/'] = links(*sorted(pages))
    pages['/robots.txt'] = robots_txt(robots)
    return Pages(pages)


def assert_spaced(log, results, delay):
    """Every request (robots.txt too) `delay` after the one before; every URL once, in
    one try."""
    times = [when for _, when in log]
    assert min(later - earlier for earlier, later in zip(times, times[1:])) >= (
        delay * TOLERANCE)
    done = sum((list(statistics.done) for statistics in results), [])
    assert sorted(statistic.url.split('/', 3)[3] for statistic in done) == [
        '', 'p0', 'p1', 'p2']
    assert set(statistic.tries for statistic in done) == set([1])


@pytest.mark.gen_test(timeout=60)
def test_robots_txt_and_pages_keep_the_delay_across_workers(serve, shared_stores):
    server, origin = serve(spaced_site('User-agent: *\n'))
    log = request_log(server)
    crawlers = [Crawler([origin + '/'], store=store, max_tasks=2,
                        **unthrottled(dict(delay=0.3)))
                for store in shared_stores('robots', 2)]
    results = yield [crawler.crawl() for crawler in crawlers]
    assert [path for path, _ in log].count('/robots.txt') in (1, 2)  # once per worker
    assert_spaced(log, results, 0.3)


@pytest.mark.gen_test(timeout=60)
def test_robots_txt_and_pages_keep_the_crawl_delay(serve, start_redis_server):
    server, origin = serve(spaced_site('User-agent: *\nCrawl-delay: 0.3\n'))
    log = request_log(server)
    statistics = yield Crawler([origin + '/'], redis=start_redis_server().url(),
                               crawl_id='crawl-delay', max_tasks=2, **UNTHROTTLED).crawl()
    assert [path for path, _ in log][0] == '/robots.txt'
    assert_spaced(log, [statistics], 0.3)


def test_a_joining_worker_that_contradicts_the_crawl_exits_2(start_redis_server, capsys):
    redis = start_redis_server()
    common = ['--redis', redis.url(), '--crawl-id', 'cli', '--no-progress', '-q']
    assert main(common + ['--demo', '--demo-pages', '20', '--max-depth', '2'] +
                UNTHROTTLED_ARGS) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(common + ['--max-depth', '3'])
    assert exited.value.code == EXIT_USAGE
    assert capsys.readouterr().err == (
        "tinycrawl: error: --redis: --max-depth 3 contradicts the crawl's --max-depth 2\n")
    # Without contradictions a late worker joins: the crawl is over, it finds no work.
    assert main(common + ['--max-depth', '2']) == 0
    assert 'Done: 0' in capsys.readouterr().out


@waits_for_processes
def test_a_fetch_slower_than_the_lease_from_the_command_line(start_redis_server, serve,
                                                            tmpdir):
    # Issue 26's item 2 as a user met it: --lease-seconds under a fetch's time, tasks
    # asking for work meanwhile. The worker renews the slow URL's lease: exit 0, no
    # traceback, each URL once.
    server, origin = serve(Pages({
        '/': links('/slow', '/a'), '/slow': {'body': links('/b'), 'delay': 2.0},
        '/a': links('/slow'), '/b': 'b'}))
    redis = start_redis_server()
    output = str(tmpdir.join('out.jsonl'))
    status, _, err = yield wait_for(start_crawl(
        origin + '/', '--redis', redis.url(), '--crawl-id', 'slow', '--lease-seconds',
        '0.5', '--max-tasks', '4', '--no-progress', '-q', '--output', output))
    assert (status, err) == (0, '')
    with io.open(output, encoding='utf-8') as lines:
        urls = [json.loads(line)['url'] for line in lines]
    assert sorted(urls) == [origin + path for path in ['/', '/a', '/b', '/slow']]
