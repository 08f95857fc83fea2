"""The crawl's limits, its memory and its state: --max-pages and --max-depth, the hashed seen
set, statistics streamed instead of kept, stop(), and the journal a crawl resumes from.
"""
from __future__ import absolute_import, division, print_function

import io
import json

import pytest

from tinytornado import gen
from tinytornado.crawler.demosite import Site
from tinytornado.crawler.engine import Crawler
from tinytornado.crawler.journal import Journal

from crawler_sites import UNTHROTTLED, Pages, by_url, links, unthrottled


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
    first = Crawler([origin + '/'], state=state, max_tasks=4, **UNTHROTTLED)
    first.on_statistic = lambda statistic: first.statistics.urls == 20 and first.stop()
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


def test_a_journal_with_a_crawl_is_not_overwritten(serve, state):
    server, origin = serve(Pages({'/': ''}))
    yield crawl([origin + '/'], state=state)
    with pytest.raises(ValueError):
        Crawler([origin + '/'], state=state)
    again = yield crawl([], state=state, resume=True)
    assert (again.urls, again.restored) == (1, 1)
    assert server.requests.count('/') == 1


def test_the_journal_records_a_url_and_what_it_queued_together(state):
    from tinytornado.crawler.stats import FetchStatistic
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
