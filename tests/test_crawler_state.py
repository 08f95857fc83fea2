"""The crawl's limits, its memory and its state: --max-pages and --max-depth, the hashed seen
set, statistics streamed instead of kept, stop(), and the journal a crawl resumes from: its
options, the tries of its URLs and the health of its hosts taken back, an older journal.
"""
from __future__ import absolute_import, division, print_function

import io
import json
import sqlite3

import pytest

from tinytornado import gen
from tinytornado.crawler.demo.website import Site
from tinytornado.crawler.engine import Crawler, WorkItem
from tinytornado.crawler.frontier import Frontier
from tinytornado.crawler.journal import Journal
from tinytornado.crawler.politeness import HostHealth
from tinytornado.crawler.stats import CrawlStatistics, FetchStatistic

from crawler_sites import (
    UNTHROTTLED, FlakyServer, Pages, by_url, links, request_log, unthrottled,
)


@gen.coroutine
def crawl(roots, **options):
    statistics = yield Crawler(roots, **unthrottled(options)).crawl()
    raise gen.Return(statistics)


def chain(length):
    """Pages '/' -> '/1' -> '/2' ... -> '/<length>'."""
    pages = dict(('/%d' % n, links('/%d' % (n + 1))) for n in range(1, length))
    pages['/'] = links('/1')
    pages['/%d' % length] = ''
    return Pages(pages)


def test_max_pages(serve):
    server, origin = serve(Site(seed=1, pages=40))
    statistics = yield crawl([origin + '/'], max_pages=15)
    assert statistics.urls == 15
    assert len([path for path in server.requests if path != '/robots.txt']) == 15


def test_max_depth(serve):
    server, origin = serve(chain(5))
    statistics = yield crawl([origin + '/'], max_depth=2)
    assert set(by_url(statistics)) == {origin + '/', origin + '/1', origin + '/2'}
    assert by_url(statistics)[origin + '/2'].depth == 2


def test_hashed_seen_set_finds_the_same_urls(serve):
    site = Site(seed=2, pages=40)
    server, origin = serve(site)
    plain = yield crawl([origin + '/'])
    hashed = yield crawl([origin + '/'], hashed_seen=True)
    assert set(by_url(hashed)) == set(by_url(plain))
    assert hashed.status_counts() == plain.status_counts()


def test_statistics_streamed_to_the_output_instead_of_kept(serve):
    server, origin = serve(Site(seed=0, pages=30))
    output = io.StringIO()
    streamed = []
    statistics = yield crawl([origin + '/'], keep_statistics=False, output=output,
                             on_statistic=streamed.append)
    assert statistics.done is None
    lines = [json.loads(line) for line in output.getvalue().splitlines()]
    assert [line['url'] for line in lines] == [statistic.url for statistic in streamed]
    assert len(lines) == statistics.urls
    kept = yield crawl([origin + '/'])
    assert statistics.counters == kept.counters
    assert statistics.summary()['counters'] == dict(kept.counters)


def test_stop_ends_the_crawl_with_what_it_has(serve, io_loop):
    pages = dict(('/p%d' % n, {'body': '', 'delay': 0.05}) for n in range(30))
    pages['/'] = links(*sorted(pages))
    server, origin = serve(Pages(pages))
    crawler = Crawler([origin + '/'], max_tasks=2, **UNTHROTTLED)
    io_loop.call_later(0.2, crawler.stop)
    statistics = yield crawler.crawl()
    assert statistics.interrupted
    assert 1 < statistics.urls < 31
    assert statistics.todo == 31 - statistics.urls
    assert 'Interrupted' in statistics.report()


@pytest.fixture
def state(tmpdir):
    return str(tmpdir.join('crawl.sqlite'))


def test_a_stopped_crawl_resumes_from_its_journal(serve, state):
    site = Site(seed=4, pages=40)
    server, origin = serve(site)
    first = Crawler([origin + '/'], state=state, max_tasks=4,
                    on_statistic=lambda statistic: first.statistics.urls == 20 and first.stop(),
                    **UNTHROTTLED)
    done_first = yield first.crawl()
    assert done_first.interrupted and done_first.urls >= 20
    requested_first = list(server.requests)
    del server.requests[:]
    second = yield crawl([], state=state, resume=True)
    assert second.restored == done_first.urls
    fetched = dict((url, statistic.status) for url, statistic in by_url(second).items()
                   if statistic.status is not None)
    assert fetched == site.expected_crawl(origin + '/')
    # Nothing finished in the first run is fetched again; what was in flight may be.
    finished_first = set(statistic.url[len(origin):] for statistic in done_first.done)
    again = set(requested_first) & set(server.requests) - set(['/robots.txt'])
    assert not again & finished_first
    assert len(again) <= 4


def test_a_stop_gives_back_untried_the_next_item_leased_with_a_finish(serve, state):
    # One task: when the first URL's record stops the crawl, the only item out is the next,
    # leased together with that finish; it goes back as it was, its try not counted.
    server, origin = serve(Site(seed=4, pages=40))
    first = Crawler([origin + '/'], state=state, max_tasks=1,
                    on_statistic=lambda statistic: first.stop(), **UNTHROTTLED)
    stopped = yield first.crawl()
    assert stopped.interrupted and stopped.urls == 1
    journal = Journal(state)
    try:
        unfinished = [entry for entry in journal.restore() if entry.statistic is None]
    finally:
        journal.close()
    assert unfinished and [entry.tries for entry in unfinished] == [0] * len(unfinished)
    assert stopped.todo == len(unfinished)


def test_a_journal_with_a_crawl_is_not_overwritten(serve, state):
    server, origin = serve(Pages({'/': ''}))
    yield crawl([origin + '/'], state=state)
    with pytest.raises(ValueError):
        Crawler([origin + '/'], state=state)
    again = yield crawl([], state=state, resume=True)
    assert (again.urls, again.restored) == (1, 1)
    assert server.requests.count('/') == 1


def test_the_journal_records_a_url_and_what_it_queued_together(state):
    journal = Journal(state)
    journal.queue([('http://a/', 0, 10)])
    journal.finish(FetchStatistic('http://a/', status=200), [('http://a/b', 1, 10)])
    journal.set_meta('roots', ['http://a/'])
    journal.close()
    journal = Journal(state)
    entries = list(journal.restore())
    assert [(entry.url, entry.depth) for entry in entries] == [('http://a/', 0),
                                                               ('http://a/b', 1)]
    assert entries[0].statistic['status'] == 200 and entries[1].statistic is None
    assert journal.get_meta('roots') == ['http://a/']
    journal.close()


def stop_after(crawler, method, count):
    """Stop `crawler` right after its journal's `method` has been called `count` times."""
    record, calls = getattr(crawler.journal, method), []

    def record_then_stop(*args):
        record(*args)
        calls.append(args)
        if len(calls) == count:
            crawler.stop()
    setattr(crawler.journal, method, record_then_stop)


def test_a_resume_takes_the_journaled_options_back(serve, state):
    server, origin = serve(chain(6))
    first = Crawler([origin + '/'], state=state, max_depth=3, include=['/[0-9]*$'],
                    obey_robots=False)
    stop_after(first, 'finish', 1)
    yield first.crawl()
    resumed = Crawler([], state=state, resume=True, max_tasks=2, request_timeout=5.0)
    options = resumed.options
    assert (options.max_depth, options.include, options.obey_robots) == (3, ['/[0-9]*$'],
                                                                         False)
    assert (options.max_tasks, options.request_timeout) == (2, 5.0)  # free to change
    statistics = yield resumed.crawl()
    assert sorted(by_url(statistics)) == [origin + path for path in ('/', '/1', '/2', '/3')]
    assert '/robots.txt' not in server.requests


def test_a_resume_refuses_options_that_contradict_the_journal(serve, state):
    server, origin = serve(chain(2))
    yield crawl([origin + '/'], state=state, max_depth=3, strict=False)
    with pytest.raises(ValueError) as raised:
        Crawler([], state=state, resume=True, max_depth=4, strict=False, max_tasks=1)
    assert str(raised.value) == "resume: max_depth=4 contradicts the journal's max_depth=3"
    with pytest.raises(ValueError) as raised:
        Crawler(['http://127.0.0.1:1/'], state=state, resume=True, strict=True)
    assert str(raised.value) == (
        "resume: roots ['http://127.0.0.1:1/'] contradict the journal's roots %r; "
        "strict=True contradicts the journal's strict=False" % ([origin + '/'],))
    # The same options again, and the roots, are no contradiction.
    again = yield crawl([origin], state=state, resume=True, max_depth=3.0, strict=False)
    assert again.restored == 3


def test_a_journal_of_an_older_version_resumes_with_the_options_given(serve, state):
    server, origin = serve(chain(4))
    old = sqlite3.connect(state)  # the schema before options, tries and hosts were kept
    old.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE urls (url TEXT PRIMARY KEY, depth INTEGER NOT NULL,
                           max_redirect INTEGER NOT NULL, statistic TEXT);""")
    with old:
        old.execute('INSERT INTO meta VALUES (?, ?)', ('roots', json.dumps([origin + '/'])))
        old.execute('INSERT INTO urls VALUES (?, 0, 10, ?)', (origin + '/', json.dumps(
            FetchStatistic(origin + '/', status=200, num_urls=1).to_dict())))
        old.execute('INSERT INTO urls VALUES (?, 1, 10, NULL)', (origin + '/1',))
    old.close()
    statistics = yield crawl([], state=state, resume=True, max_depth=2)
    assert sorted(by_url(statistics)) == [origin + path for path in ('/', '/1', '/2')]
    assert server.requests.count('/') == 0
    journal = Journal(state)
    assert journal.get_meta('options')['max_depth'] == 2  # checked from now on
    journal.close()


def test_tries_and_host_backoff_survive_a_stop(serve, state):
    # Dropped connections: the host's trouble, which pauses the host (one URL's 503s
    # would back off that URL alone).
    server, origin = serve(Pages({'/': links('/busy'), '/busy': ''}), FlakyServer,
                           failures={'/busy': None})
    log = request_log(server)
    first = Crawler([origin + '/'], state=state, max_tries=4, backoff=0.1,
                    obey_robots=False, **UNTHROTTLED)
    stop_after(first, 'failed', 2)
    yield first.crawl()
    assert [path for path, _ in log] == ['/', '/busy', '/busy']
    journal = Journal(state)
    [(failures, pause)] = journal.hosts().values()
    assert failures == 2 and 0 < pause <= 0.2
    # Each hand-out counts as a try when made: the root's one, /busy's two failed ones.
    assert [entry.tries for entry in journal.restore()] == [1, 2]
    journal.close()
    statistics = yield crawl([], state=state, resume=True)
    busy = by_url(statistics)[origin + '/busy']
    assert (busy.status, busy.tries) == (None, 4)
    times = [when for path, when in log if path == '/busy']
    assert len(times) == 4
    # The pause after the second failure (0.2 s) held on across the stop; the third's
    # doubled it.
    assert times[2] - times[1] >= 0.2 - 0.01 and times[3] - times[2] >= 0.4 - 0.01


def test_a_host_given_up_stays_given_up_after_a_stop(serve, state):
    pages = dict(('/p%d' % n, '') for n in range(4))
    pages['/'] = links(*sorted(pages))
    # Dropped connections: the host's trouble (503s of one URL would not give it up).
    server, origin = serve(Pages(pages), FlakyServer,
                           failures=dict((path, None) for path in pages if path != '/'))
    first = Crawler([origin + '/'], state=state, max_tasks=1, max_tries=10, backoff=0.0,
                    max_host_failures=3, obey_robots=False, **UNTHROTTLED)
    stop_after(first, 'failed', 2)
    yield first.crawl()
    statistics = yield crawl([], state=state, resume=True, max_tasks=1)
    assert [path for path in server.requests if path.startswith('/p')] == ['/p0'] * 3
    assert by_url(statistics)[origin + '/p0'].tries == 3
    given_up = [s.url for s in statistics.done if (s.exception or '').startswith('HostGiven')]
    assert sorted(given_up) == [origin + path for path in ('/p1', '/p2', '/p3')]


def test_host_health_snapshot_and_restore(virtual_clock, io_loop):
    health = HostHealth(Frontier(), backoff=1.0, max_failures=3)
    health.failed('a:80', 0)  # no answer: the host's trouble
    virtual_clock.advance(0.25)
    health.failed('a:80', 1)
    assert health.snapshot('a:80') == (2, 2.0) and health.snapshot('b:80') == (0, 0.0)
    frontier = Frontier()
    restored = HostHealth(frontier, backoff=1.0, max_failures=3)
    restored.restore('a:80', 2, 2.0)
    restored.restore('c:80', 3, 0.0)
    assert restored.snapshot('a:80') == (2, 2.0)
    assert (restored.is_given_up('a:80'), restored.is_given_up('c:80')) == (False, True)
    assert restored.failed('a:80', 0)[1]  # the third in a row: given up
    frontier.put(WorkItem('http://a/', 'a:80', 0, 10, 0))
    yield frontier.get()
    assert io_loop.time() == 0.25 + 4.0  # the third failure's pause


def test_the_rate_counts_only_the_urls_this_run_fetched():
    statistics = CrawlStatistics(max_tasks=2)
    for n in range(30):
        statistics.add(FetchStatistic('http://a/%d' % n, status=200), restored=True)
    for n in range(10):
        statistics.add(FetchStatistic('http://a/new%d' % n, status=200))
    statistics.started, statistics.finished = 100.0, 110.0
    assert statistics.report().splitlines()[0] == (
        'Finished 40 urls in 10.000 secs (1.0 urls/sec) (max_tasks=2: 0.500 urls/sec/task)')
