"""The work-store contract (crawler/storecontract.py) as tests: each test runs against the
memory, SQLite and Redis stores (tests/work_stores.py; Redis is a real redis-server), as
trio's check_one_way_stream runs one list of rules against every stream, so that the
three stores cannot drift apart. A rule that needs what a kind lacks (a store that keeps
its crawl past its close, stores sharing a crawl) runs on the kinds that have it.

The rules of issue 26, each a test here: a fetch slower than its lease, a URL whose
hand-outs keep expiring (no reclaim loop), a Redis outage of 60 s under worker processes,
a joiner started before the crawl, URLs always answering 503 beside good ones, the rate
ceiling and one politeness model in every store.
"""
from __future__ import absolute_import, division, print_function

import collections
import io
import json
import os
import socket
import sys

import pytest

from tinytornado import gen
from tinytornado.crawler.application.cli import main
from tinytornado.crawler.crawloptions import DEFAULT_OPTIONS
from tinytornado.crawler.demo.website import Site
from tinytornado.crawler.engine import Crawler, WorkItem
from tinytornado.crawler.frontier import Frontier
from tinytornado.crawler.application.linkcheck import LinkChecker
from tinytornado.crawler.outputs import CallbackOutput
from tinytornado.crawler.politeness import AutoThrottle, HostHealth, PolitenessRule
from tinytornado.crawler.redisclient import RedisClient
from tinytornado.crawler.redisstore import RedisWorkStore
from tinytornado.crawler.stats import FetchStatistic, is_unchecked
from tinytornado.crawler.workstore import host_key
from tinytornado.ioloop import IOLoop

from crawler_sites import UNTHROTTLED, UNTHROTTLED_ARGS, Pages, by_url, links, request_log
from test_crawler_cli import child, start_crawl, wait_for, waits_for_processes
from test_crawler_collect import wait_until
from test_crawler_distributed import one_loop_kind, site_and_root
from test_crawler_join import waiting_line
from test_crawler_outage import outage_crawl
from work_stores import (  # noqa: F401 (the fixtures)
    kept_work_stores, shared_work_stores, started, work_stores,
)

ROOT = 'http://a.test/'


def item(url, tries=0):
    return WorkItem(url, host_key(url), 1, 10, tries)


def statistic(leased, status=200):
    return FetchStatistic(leased.url, status=status, depth=leased.depth,
                          tries=leased.tries + 1)


@gen.coroutine
def drain(store):
    """Lease and finish every item left; a Future of the (url, tries) leased."""
    leased = []
    while True:
        got = yield store.lease()
        if got is None:
            raise gen.Return(leased)
        leased.append((got.url, got.tries))
        yield store.done(got, statistic(got), [])


def times_finished(statistics):
    return collections.Counter(statistic.url for statistic in statistics.done)


# -- lease, done, retry, put back, abandon ----------------------------------------------------

@pytest.mark.gen_test(timeout=30)
def test_each_url_is_admitted_once_and_leased_until_done(work_stores):
    store = work_stores.new()
    restored = yield started(store, [ROOT], **UNTHROTTLED)
    assert restored == []
    root = yield store.lease()
    assert (root.url, root.tries, store.unfinished()) == (ROOT, 0, 1)
    new = [item(ROOT + 'x'), item(ROOT + 'y'), item('http://b.test/')]
    admitted = yield store.done(root, statistic(root), new)
    assert admitted == new
    leased = yield drain(store)
    assert sorted(leased) == sorted((each.url, 0) for each in new)
    assert store.unfinished() == 0


@pytest.mark.gen_test(timeout=30)
def test_lease_answers_none_only_once_nothing_is_in_flight(work_stores):
    store = work_stores.new()
    yield started(store, [ROOT], **UNTHROTTLED)
    root = yield store.lease()
    waiting = store.lease()
    yield gen.sleep(0.3)  # a Redis store asks again every 0.1 s meanwhile
    assert not waiting.done()  # the item in flight may still lead somewhere
    yield store.done(root, statistic(root), [])
    assert (yield waiting) is None


@pytest.mark.gen_test(timeout=30)
def test_retry_counts_a_try_and_put_back_none(work_stores):
    store = work_stores.new()
    yield started(store, [ROOT], **UNTHROTTLED)
    root = yield store.lease()
    yield store.retry(root)
    retried = yield store.lease()
    assert (retried.url, retried.tries) == (ROOT, 1)
    yield store.put_back(retried)
    put_back = yield store.lease()
    assert (put_back.url, put_back.tries) == (ROOT, 1)
    yield store.done(put_back, statistic(put_back), [])
    assert (yield store.lease()) is None


@pytest.mark.gen_test(timeout=30)
def test_abandon_gives_the_item_up_in_this_process(work_stores):
    store = work_stores.new()
    yield started(store, [ROOT], **UNTHROTTLED)
    root = yield store.lease()
    assert store.unfinished() == 1
    yield store.abandon(root)
    assert store.unfinished() == 0  # a kept crawl keeps it: see the resume below


# -- leases and finishes asked for together (a shared store batches them) --------------------

@pytest.mark.gen_test(timeout=30)
def test_leases_asked_together_keep_the_per_host_cap(work_stores):
    # A worker's tasks ask for leases at once, and a shared store sends them in one call:
    # still no more items of a host than its cap are handed out, and each one finished
    # lets one more go.
    store = work_stores.new()
    yield started(store, [ROOT], delay=0.0, max_per_host=2, max_rate=0.0)
    root = yield store.lease()
    pages = [item(ROOT + 'p%d' % n) for n in range(5)]
    yield store.done(root, statistic(root), pages)
    asked = [store.lease() for _ in range(4)]
    yield gen.sleep(0.3)  # a Redis store asks again every 0.1 s meanwhile
    held = [future.result() for future in asked if future.done()]
    waiting = [future for future in asked if not future.done()]
    assert len(held) == 2
    assert (yield [store.done(each, statistic(each), []) for each in held]) == [[], []]
    later = yield waiting
    assert len(later) == 2
    yield [store.done(each, statistic(each), []) for each in later]
    last = yield drain(store)
    assert sorted([each.url for each in held + later] + [url for url, _ in last]) == [
        page.url for page in pages]


@pytest.mark.gen_test(timeout=30)
def test_finishes_sent_together_each_admit_their_own_items(work_stores):
    store = work_stores.new()
    yield started(store, [ROOT], **UNTHROTTLED)
    root = yield store.lease()
    yield store.done(root, statistic(root), [item(ROOT + 'p%d' % n) for n in range(3)])
    held = yield [store.lease() for _ in range(3)]
    found = [[item(each.url + '/x'), item(each.url + '/y')] for each in held]
    admitted = yield [store.done(each, statistic(each), new)
                      for each, new in zip(held, found)]
    assert admitted == found
    leased = yield drain(store)
    assert sorted(leased) == sorted((new.url, 0) for new in sum(found, []))


# -- a kept crawl ------------------------------------------------------------------------------

@pytest.mark.gen_test(timeout=30)
def test_a_kept_crawl_resumes_where_it_was_after_close(kept_work_stores):
    work_stores = kept_work_stores
    store = work_stores.new()
    yield started(store, [ROOT], **UNTHROTTLED)
    root = yield store.lease()
    yield store.done(root, statistic(root), [item(ROOT + 'x'), item(ROOT + 'y')])
    first = yield store.lease()
    yield store.abandon(first)  # a failed try of a stopping crawl: counted, kept
    store.close()
    again = work_stores.again()
    restored = yield started(again, [ROOT], **UNTHROTTLED)
    # A journal gives back what this process finished; a shared crawl's joiner, nothing.
    assert [each.url for each in restored] == ([] if work_stores.shared else [ROOT])
    # A journal's URLs join this process's seen set; a joiner's are Redis's to know.
    assert (ROOT + 'y' in again.seen_urls) == (not work_stores.shared)
    leased = yield drain(again)
    assert sorted(leased) == sorted([(first.url, 1), (
        ROOT + ('y' if first.url.endswith('x') else 'x'), 0)])


# -- given-up hosts, exactly once, through the crawler ----------------------------------------

def crawler(work_stores, roots, store=None, **options):
    store = store if store is not None else work_stores.new()
    return Crawler(roots, store=store, **dict(UNTHROTTLED, **options))


@pytest.mark.gen_test(timeout=60)
def test_a_crawl_finishes_each_url_exactly_once(work_stores, serve):
    server, origin = serve(Site(seed=3, pages=40))
    statistics = yield crawler(work_stores, [origin + '/'], max_tasks=5).crawl()
    counts = times_finished(statistics)
    assert len(counts) > 40 and set(counts.values()) == {1}
    assert statistics.todo == 0 and not statistics.interrupted


@pytest.mark.gen_test(timeout=60)
def test_a_given_up_host_still_has_each_url_reported_once(work_stores, serve):
    bad = ['/bad%d' % n for n in range(6)]
    pages = dict((path, {'status': 503}) for path in bad)
    pages['/'] = links(*bad)
    server, origin = serve(Pages(pages))
    log = request_log(server)
    statistics = yield crawler(work_stores, [origin + '/'], max_tasks=2, max_tries=1,
                               max_host_failures=2).crawl()
    counts = times_finished(statistics)
    assert sorted(counts) == sorted([origin + '/'] + [origin + path for path in bad])
    assert set(counts.values()) == {1}
    assert statistics.todo == 0
    requested = [path for path, _ in log if path in bad]
    assert len(requested) == len(set(requested)) < len(bad)  # the others never tried


@pytest.mark.gen_test(timeout=60)
def test_two_stores_of_one_crawl_finish_each_url_once(shared_work_stores, serve):
    work_stores = shared_work_stores
    server, origin = serve(Site(seed=5, pages=40))
    log = request_log(server)
    first = crawler(work_stores, [origin + '/'], max_tasks=3)
    second = crawler(work_stores, [origin + '/'], store=work_stores.again(), max_tasks=3)
    both = yield [first.crawl(), second.crawl()]
    counts = times_finished(both[0]) + times_finished(both[1])
    assert len(counts) > 40 and set(counts.values()) == {1}
    pages = [path for path, _ in log if path != '/robots.txt']
    assert len(pages) == len(set(pages))


# -- leases that follow the work --------------------------------------------------------------

@pytest.mark.gen_test(timeout=60)
def test_a_fetch_slower_than_its_lease_keeps_its_url(work_stores, serve):
    # A Redis lease of 1.5 s, a page that takes three (4.5 s), and three other tasks of
    # the same worker asking for work meanwhile: the worker renews the lease of the slow
    # page (every 0.5 s: a loaded machine may stall the loop for a second), so nobody
    # takes it over, and it is fetched and finished once, with no crash.
    server, origin = serve(Pages({
        '/': links('/slow', '/a', '/b'), '/slow': {'body': links('/c'), 'delay': 4.5},
        '/a': links('/slow', '/b'), '/b': 'b', '/c': 'c'}))
    log = request_log(server)
    store = work_stores.new(lease_seconds=1.5)
    statistics = yield crawler(work_stores, [origin + '/'], store=store,
                               max_tasks=4).crawl()
    counts = times_finished(statistics)
    assert sorted(counts) == [origin + path for path in ['/', '/a', '/b', '/c', '/slow']]
    assert set(counts.values()) == {1}
    slow = by_url(statistics)[origin + '/slow']
    assert (slow.status, slow.tries) == (200, 1)
    assert [path for path, _ in log].count('/slow') == 1


@pytest.mark.gen_test(timeout=60)
def test_a_url_whose_hand_outs_all_end_unfinished_fails_after_max_tries(kept_work_stores,
                                                                         serve):
    # Every hand-out counts as a try but one given back untried (put_back): three
    # processes die holding the root (closed without giving it back: a Redis lease not
    # renewed expires; a journal counted the hand-out when it was made), so the next one
    # finishes the URL as failed, untried, and the crawl ends instead of handing it out
    # for ever. (An in-memory crawl ends with its process: nothing comes back.)
    work_stores = kept_work_stores
    server, origin = serve(Pages({'/': 'never asked'}))
    log = request_log(server)
    root = origin + '/'
    for dead in range(3):
        store = (work_stores.again if dead else work_stores.new)(lease_seconds=0.2)
        yield started(store, [root], **UNTHROTTLED)
        leased = yield store.lease()
        assert (leased.url, leased.tries) == (root, dead)
        store.close()
    last = crawler(work_stores, [root], store=work_stores.again(lease_seconds=0.2),
                   max_tries=3)
    statistics = yield last.crawl()
    failed = by_url(statistics)[root]
    assert (failed.status, failed.tries) == (None, 3)
    assert failed.exception.startswith('LeaseExpired: handed out 3 times')
    assert log == [] and statistics.urls == 1


@pytest.mark.gen_test(timeout=30)
def test_a_hand_out_given_back_untried_counts_no_try(kept_work_stores):
    # put_back (robots.txt read in the lease) takes the hand-out's try back: a process
    # that dies after it leaves the URL with the tries it had.
    work_stores = kept_work_stores
    store = work_stores.new(lease_seconds=0.2)
    yield started(store, [ROOT], **UNTHROTTLED)
    root = yield store.lease()
    yield store.put_back(root)
    store.close()
    again = work_stores.again(lease_seconds=0.2)
    yield started(again, [ROOT], **UNTHROTTLED)
    root = yield again.lease()
    assert (root.url, root.tries) == (ROOT, 0)
    yield again.done(root, statistic(root), [])


# -- outages survived, joining first: worker processes sharing a crawl ------------------------

@pytest.mark.slow
@pytest.mark.gen_test(timeout=300)  # the outage, the crawl, a single-process one to compare
@one_loop_kind
def test_workers_and_a_collect_wait_out_a_60_s_outage_and_lose_nothing(
        serve, shared_work_stores, tmpdir):
    # redis-server stopped for 60 s (appendonly: it comes back with the crawl) under two
    # workers and --collect: they wait, say so once, and go on where they were. A lease
    # longer than the outage: leases that expire under a fetch are the rule above.
    redis = shared_work_stores.server(appendonly='yes')
    site, server, root = site_and_root(serve, slow_fraction=0.5, slow_delay=0.2)
    crawl = outage_crawl(redis, root, str(tmpdir), '--lease-seconds', '300',
                         '--redis-wait', '120')
    crawl.start_workers([sys.executable], count=2)
    crawl.start_collector()
    yield wait_until(lambda: len(server.requests) >= len(site.paths()) // 4)
    redis.stop()
    yield gen.sleep(60)  # twice the wait that used to end every worker
    redis.start()
    yield crawl.wait_all()
    yield crawl.assert_each_url_once()
    for name in ['worker-0', 'worker-1', 'collect']:
        log = crawl.log(name)
        assert log.count('unreachable') == 1, log  # said once
        assert 'commands wait up to 120 s for it' in log or name == 'collect', log
        assert 'reachable again, after' in log and 'Traceback' not in log, log


@waits_for_processes
def test_a_joiner_started_first_waits_and_crawls_its_share(shared_work_stores, serve,
                                                          tmpdir):
    server, origin = serve(Site(seed=4, pages=30))
    redis = shared_work_stores.server()
    shared = ['--redis', redis.url(), '--crawl-id', 'late', '--no-progress', '-q']
    outputs = [str(tmpdir.join('joiner.jsonl')), str(tmpdir.join('starter.jsonl'))]
    joiner_err = str(tmpdir.join('joiner.err'))
    with io.open(joiner_err, 'wb') as err:
        joiner = child(['-m', 'tinytornado.crawler'] + shared + UNTHROTTLED_ARGS + [
            '--join-timeout', '60', '--output', outputs[0]], stderr=err)
    # The crawl starts only once the joiner has said it waits: it must have found none.
    waited = 0.0
    while joiner.poll() is None and waited < 30 and not os.path.getsize(joiner_err):
        yield gen.sleep(0.05)
        waited += 0.05
    starter = start_crawl(*shared + [origin + '/', '--output', outputs[1]])
    (joined, _, _), (start, _, _) = yield [wait_for(joiner, timeout=40),
                                           wait_for(starter, timeout=40)]
    assert (joined, start) == (0, 0)
    with io.open(joiner_err, encoding='utf-8') as err:
        assert err.read().splitlines() == [waiting_line('late', 60)]
    urls = collections.Counter()
    for path in outputs:
        with io.open(path, encoding='utf-8') as lines:
            urls.update(json.loads(line)['url'] for line in lines)
    assert len(urls) > 30 and set(urls.values()) == {1}


# -- one politeness model ---------------------------------------------------------------------
#
# - the rate ceiling (``max_rate``) holds over any delay rule, as the test server counts
#   the requests of a site that answers at once, in one process and across workers;
# - the default politeness is the same over Redis as in one process: an adapted delay, not
#   a fixed 1 s, so a crawl of ~100 pages takes a time set by the ceiling;
# - URLs that always answer 503 back off on their own: their host's good pages finish at
#   the polite rate, and exactly those URLs are broken;
# - the URLs of a host given up (refusing connections) are unchecked, with the reason, in
#   the statistics, the link checker, ``--link-check`` and the summary; never broken.
#
# Rates are counted from the server's side, in windows, with margins of twice what the
# ceiling allows (without it, a host gets hundreds of requests a second), and durations
# against what the wrong rule would take: the machine running the tests may be loaded.

@gen.coroutine
def crawl_in(work_stores, roots, workers=1, checker=None, **options):
    """A Future of the list of each worker's CrawlStatistics, a crawl of `roots` by
    `workers` crawlers (several: a shared kind only), each on its own store of one new
    crawl of `work_stores`; every worker's URLs told to `checker`, a LinkChecker."""
    assert workers == 1 or work_stores.shared
    if checker is not None:
        options.update(on_links=checker.add_links,
                       outputs=[CallbackOutput(checker.add_statistic)])
    stores = [work_stores.new()] + [work_stores.again() for _ in range(workers - 1)]
    results = yield [Crawler(roots, store=store, **options).crawl() for store in stores]
    raise gen.Return(results)


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
def test_the_rate_ceiling_holds_over_any_delay(serve, work_stores, delay):
    server, origin = serve(numbered_site(24))
    log = request_log(server)
    results = yield crawl_in(work_stores, [origin + '/'], max_rate=8, delay=delay,
                             start_delay=0.0, min_delay=0.0, max_per_host=None,
                             max_tasks=10, obey_robots=False)
    assert len(finished(results)) == 25
    times = [when for _, when in log]
    # 25 requests at 8/s at most: 3 s at least; without the ceiling, a few ms.
    assert max(times) - min(times) >= 24 / 8.0 * 0.8
    assert most_in_a_second(times) <= 8 * 2


@pytest.mark.gen_test(timeout=60)
@pytest.mark.parametrize('workers', [2, 4])
def test_the_rate_ceiling_holds_across_workers(serve, shared_work_stores, workers):
    server, origin = serve(numbered_site(24))
    log = request_log(server)
    results = yield crawl_in(shared_work_stores, [origin + '/'], workers=workers,
                             max_rate=8, delay=0.0, max_per_host=None, max_tasks=5,
                             obey_robots=False)
    assert len(finished(results)) == 25
    assert sum(len(statistics.done) for statistics in results) == 25  # each URL once
    times = [when for _, when in log]
    assert max(times) - min(times) >= 24 / 8.0 * 0.8
    assert most_in_a_second(times) <= 8 * 2


@pytest.mark.gen_test(timeout=90)
def test_the_default_politeness_is_the_same_in_every_store(serve, work_stores):
    # The defaults but the ceiling, lifted to 20/s so that the test takes seconds: at
    # that rate ~100 pages take ~5 s; a fixed delay of 1 s (start_delay) would take 100.
    server, origin = serve(Site(seed=3, pages=100))
    log = request_log(server)
    began = IOLoop.current().time()
    results = yield crawl_in(work_stores, [origin + '/'],
                             workers=4 if work_stores.shared else 1, max_rate=20)
    elapsed = IOLoop.current().time() - began
    count = len(finished(results))
    assert count >= 100
    assert elapsed < count / 20.0 * 4 + 10  # 100 pages: 30 s; a fixed 1 s: 100
    assert most_in_a_second([when for _, when in log]) <= 20 * 2
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
def test_urls_that_always_answer_503_back_off_alone(serve, work_stores):
    site, bad = bad_and_good_site()
    server, origin = serve(site)
    log = request_log(server)
    began = IOLoop.current().time()
    checker = LinkChecker()
    results = yield crawl_in(work_stores, [origin + '/'], checker=checker,
                             workers=2 if work_stores.shared else 1,
                             max_rate=20, backoff=0.2, obey_robots=False)
    elapsed = IOLoop.current().time() - began
    done = finished(results)
    assert sorted(link.url for link in checker.broken_links([origin + '/'])) == sorted(
        origin + path for path in bad)
    assert checker.unchecked == {}
    good = [statistic for url, statistic in done.items() if '/good' in url]
    assert len(good) == 48 and set(statistic.status for statistic in good) == set([200])
    assert not [statistic for statistic in done.values() if is_unchecked(statistic)]
    assert set(done[origin + path].tries for path in bad) == set([4])  # max_tries
    # 61 pages and 36 retries at 20/s: ~5 s; a host paused for each 503 (doubling up to
    # 60 s) would take minutes.
    assert elapsed < 45
    assert most_in_a_second([when for _, when in log]) <= 20 * 2


@pytest.fixture
def refusing_origin():
    """http://127.0.0.1:PORT of a port that refuses connections while the test runs."""
    bound = socket.socket()
    bound.bind(('127.0.0.1', 0))
    yield 'http://127.0.0.1:%d' % bound.getsockname()[1]
    bound.close()


@pytest.mark.gen_test(timeout=60)
def test_urls_of_a_host_given_up_are_unchecked_not_broken(serve, work_stores,
                                                          refusing_origin):
    server, origin = serve(numbered_site(3))
    refused = [refusing_origin + '/r%d' % n for n in range(6)]
    checker = LinkChecker()
    yield crawl_in(work_stores, [origin + '/'] + refused, checker=checker,
                   max_host_failures=2, backoff=0.01, max_per_host=1, max_tasks=1,
                   max_rate=0, obey_robots=False)
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


def test_a_worker_prints_the_politeness_in_force(serve, shared_work_stores, capsys):
    server, origin = serve(numbered_site(1))
    redis = shared_work_stores.server()
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


def test_redis_adapts_the_delay_by_the_same_rule(shared_work_stores, io_loop):
    throttle = AutoThrottle(target_concurrency=2.0, start_delay=1.0, min_delay=0.1,
                            max_delay=3.0)
    rule = PolitenessRule(2, None, throttle, 5.0, 10.0)
    client = RedisClient(shared_work_stores.server().url())
    store = RedisWorkStore(client, 'adapted', WorkItem, politeness=rule.store_settings())
    answers = [(0.2, True), (0.0, True), (5.0, False), (0.4, True), (9.0, True)]
    delay = throttle.start_delay
    try:
        for latency, ok in answers:
            delay = throttle.next_delay(delay, latency, ok)
            io_loop.run_sync(lambda: store.answered('h:80', latency, ok))
            shared = io_loop.run_sync(lambda: client.execute(
                'HGET', store.prefix + 'host:h:80', 'throttle'))
            assert abs(float(shared) - delay * 1000) < 1.0
    finally:
        client.close()
