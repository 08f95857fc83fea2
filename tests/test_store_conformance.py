"""The work-store contract (crawler/storecontract.py) as tests: each test runs against the
memory, SQLite and Redis stores (tests/work_stores.py; Redis is a real redis-server), as
trio's check_one_way_stream runs one list of rules against every stream, so that the
three stores cannot drift apart. A rule that needs what a kind lacks (a store that keeps
its crawl past its close, stores sharing a crawl) runs on the kinds that have it.
"""
from __future__ import absolute_import, division, print_function

import collections

import pytest

from tinytornado import gen
from tinytornado.crawler.demosite import Site
from tinytornado.crawler.engine import Crawler, WorkItem
from tinytornado.crawler.stats import FetchStatistic
from tinytornado.crawler.workstore import host_key

from crawler_sites import UNTHROTTLED, Pages, by_url, links, request_log
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
    # A Redis lease of 0.5 s, a page that takes 2 s, and three other tasks of the same
    # worker asking for work meanwhile: the worker renews the lease of the slow page, so
    # nobody takes it over, and it is fetched and finished once, with no crash.
    server, origin = serve(Pages({
        '/': links('/slow', '/a', '/b'), '/slow': {'body': links('/c'), 'delay': 2.0},
        '/a': links('/slow', '/b'), '/b': 'b', '/c': 'c'}))
    log = request_log(server)
    store = work_stores.new(lease_seconds=0.5)
    statistics = yield crawler(work_stores, [origin + '/'], store=store,
                               max_tasks=4).crawl()
    counts = times_finished(statistics)
    assert sorted(counts) == [origin + path for path in ['/', '/a', '/b', '/c', '/slow']]
    assert set(counts.values()) == {1}
    slow = by_url(statistics)[origin + '/slow']
    assert (slow.status, slow.tries) == (200, 1)
    assert [path for path, _ in log].count('/slow') == 1


@pytest.mark.gen_test(timeout=60)
def test_a_url_whose_hand_outs_all_expire_fails_after_max_tries(shared_work_stores,
                                                                 serve):
    # Three workers die holding the root (closed without giving it back: no renewal);
    # each expired hand-out counts as a try, so the next worker finishes the URL as
    # failed, untried, and the crawl ends instead of handing it out for ever.
    work_stores = shared_work_stores
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
