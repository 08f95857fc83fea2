"""The crawl engine's parts on their own: the frontier (on a virtual clock, so its timing is
exact), the hashed seen set, the statistics and their report, the progress line, and the
helpers that read a response.
"""
from __future__ import absolute_import, division, print_function

import collections

import pytest
import six

from tinytornado import gen
from tinytornado.crawler.fetch import describe_exception, retry_after_seconds
from tinytornado.crawler.frontier import Frontier
from tinytornado.crawler.application.progress import ProgressLine
from tinytornado.crawler.seen import HashedURLSet, new_seen_set
from tinytornado.crawler.stats import (
    ROBOTS_DISALLOWED, CrawlStatistics, FetchStatistic, url_report_line,
)
from tinytornado.httputil import HTTPHeaders
from tinytornado.ioloop import IOLoop

Item = collections.namedtuple('Item', 'url host')


def items(host, count):
    return [Item('%s/%d' % (host, n), host) for n in range(count)]


@gen.coroutine
def take_all(frontier, count, hold=0.0):
    """Take `count` items one after the other; [(loop time, url)] of each."""
    taken = []
    for _ in range(count):
        item = yield frontier.get()
        taken.append((IOLoop.current().time(), item.url))
        if hold:
            yield gen.sleep(hold)
        frontier.task_done(item)
    raise gen.Return(taken)


# -- the frontier -----------------------------------------------------------------------------

def test_frontier_takes_turns_between_hosts(virtual_clock):
    frontier = Frontier()
    for item in items('a', 3) + items('b', 2) + items('c', 1):
        frontier.put(item)
    taken = yield take_all(frontier, 6)
    assert [url for _, url in taken] == ['a/0', 'b/0', 'c/0', 'a/1', 'b/1', 'a/2']


def test_frontier_delay_spaces_one_host_but_not_the_others(virtual_clock):
    frontier = Frontier(delay=1.0)
    for item in items('a', 3) + items('b', 2):
        frontier.put(item)
    taken = yield take_all(frontier, 5)
    assert taken == [(0.0, 'a/0'), (0.0, 'b/0'), (1.0, 'a/1'), (1.0, 'b/1'), (2.0, 'a/2')]


def test_frontier_limits_items_in_flight_per_host(virtual_clock):
    frontier = Frontier(max_per_host=2)
    for item in items('a', 4):
        frontier.put(item)
    taken = yield [take_all(frontier, 1, hold=1.0) for _ in range(4)]
    assert sorted(when for [(when, _)] in taken) == [0.0, 0.0, 1.0, 1.0]


def test_frontier_pause_and_host_delay(virtual_clock):
    frontier = Frontier()
    for item in items('a', 3):
        frontier.put(item)
    frontier.pause_host('a', 2.0)
    frontier.pause_host('a', 1.0)  # a pause only grows
    frontier.set_host_delay('a', 0.5)
    assert frontier.host_delay('a') == 0.5
    taken = yield take_all(frontier, 3)
    assert [when for when, _ in taken] == [2.0, 2.5, 3.0]


def test_frontier_delay_counts_from_each_sending_of_a_request(virtual_clock):
    frontier = Frontier(delay=1.0)
    for item in items('a', 2):
        frontier.put(item)
    first = yield frontier.get()
    sending = frontier.request_started('a')  # a second request (robots.txt) for the item
    yield gen.sleep(0.5)
    sending.sent()
    yield gen.sleep(0.25)
    sending.sent()  # written again: a redirect followed, or a retry
    sending.ended()  # sent already: changes nothing
    frontier.task_done(first)
    second = yield frontier.get()
    assert (IOLoop.current().time(), second.url) == (1.75, 'a/1')
    frontier.task_done(second)


@pytest.mark.parametrize('end', ['sent', 'ended'])
def test_frontier_holds_a_host_with_a_delay_back_until_its_request_is_sent(virtual_clock, end):
    """A request slower to go out than the delay (a slow connect) holds the next one back;
    one that never goes out (its connection failed) counts from when it ended."""
    frontier = Frontier(delay=1.0)
    for item in items('a', 2):
        frontier.put(item)
    first = yield frontier.get()
    sending = frontier.request_started('a')
    frontier.task_done(first)  # a free slot is not what holds the next one back
    second = frontier.get()
    yield gen.sleep(1.5)
    assert not second.done()
    getattr(sending, end)()
    sending.ended()
    second = yield second
    assert (IOLoop.current().time(), second.url) == (2.5, 'a/1')


def test_frontier_without_a_delay_does_not_wait_for_sending(virtual_clock):
    frontier = Frontier(max_per_host=2)
    for item in items('a', 2):
        frontier.put(item)
    first = yield frontier.get()
    frontier.request_started('a')
    second = yield frontier.get()
    assert (IOLoop.current().time(), second.url) == (0.0, 'a/1')


def test_frontier_join_waits_for_items_put_back(virtual_clock):
    frontier = Frontier()
    frontier.put(Item('a/0', 'a'))
    done = frontier.join()
    item = yield frontier.get()
    frontier.put(item, front=True)  # a retry, put back before the try is marked done
    frontier.task_done(item)
    assert not done.done() and frontier.unfinished() == 1
    item = yield frontier.get()
    frontier.task_done(item)
    yield done
    assert frontier.unfinished() == 0 and frontier.qsize() == 0


def test_frontier_skips_a_cancelled_getter(virtual_clock):
    frontier = Frontier()
    first, second = frontier.get(), frontier.get()
    first.cancel()
    frontier.put(Item('a/0', 'a'))
    assert first.cancelled()
    assert (yield second).url == 'a/0'


def test_frontier_remove_pending(virtual_clock):
    frontier = Frontier()
    for item in items('a', 3) + items('b', 1):
        frontier.put(item)
    removed = frontier.remove_pending('a')
    assert [item.url for item in removed] == ['a/0', 'a/1', 'a/2']
    assert [item.url for item in frontier.pending_items()] == ['b/0']
    for item in removed:
        frontier.task_done(item)
    assert frontier.unfinished() == 1
    frontier.close()


def timer_deadlines(io_loop):
    return [deadline for deadline, _ in io_loop.pending_work()[0]]


def test_frontier_close_removes_its_timers(virtual_clock, io_loop):
    frontier = Frontier(delay=10.0)
    for item in items('a', 2):
        frontier.put(item)
    item = yield frontier.get()
    frontier.task_done(item)
    assert 10.0 in timer_deadlines(io_loop)  # the wake-up for a/1
    frontier.close()
    assert 10.0 not in timer_deadlines(io_loop)


def test_a_closed_frontier_sets_no_timer(virtual_clock, io_loop):
    frontier = Frontier(delay=10.0)
    for item in items('a', 2):
        frontier.put(item)
    item = yield frontier.get()
    sending = frontier.request_started('a')
    frontier.close()
    # The crawl is over, and this request ends after it, never sent.
    sending.ended()
    frontier.task_done(item)
    assert 10.0 not in timer_deadlines(io_loop)  # no wake-up for a/1


# -- the seen set -----------------------------------------------------------------------------

def test_hashed_seen_set_behaves_like_a_set():
    seen = HashedURLSet()
    urls = ['http://example.com/%d' % n for n in range(5000)]
    for url in urls:
        seen.add(url)
    seen.add(urls[0])
    assert len(seen) == 5000
    assert all(url in seen for url in urls)
    assert 'http://example.com/5000' not in seen
    assert isinstance(new_seen_set(False), set)
    assert isinstance(new_seen_set(True), HashedURLSet)


# -- statistics -------------------------------------------------------------------------------

def sample_statistics():
    return [
        FetchStatistic('http://a/', status=200, content_type='text/html; charset=utf-8',
                       encoding='utf-8', size=100, num_urls=3, num_new_urls=2),
        FetchStatistic('http://a/go', status=301, next_url='http://a/'),
        FetchStatistic('http://a/f.pdf', status=200, content_type='application/pdf', size=7),
        FetchStatistic('http://a/x', exception='TimeoutError: too slow', tries=4),
        FetchStatistic('http://a/private/', exception=ROBOTS_DISALLOWED),
        FetchStatistic('http://a/gone', status=404, content_type='text/html', size=9),
    ]


def test_crawl_statistics_counters():
    statistics = CrawlStatistics(keep_statistics=False, max_tasks=3)
    for statistic in sample_statistics():
        statistics.add(statistic)
    assert statistics.done is None and statistics.urls == 6
    assert statistics.counters == {
        'html': 1, 'html_bytes': 100, 'error_page': 1, 'error_page_bytes': 9,
        'redirect': 1, 'other': 1, 'other_bytes': 7,
        'other_application/pdf': 1, 'fail': 1, 'fail_TimeoutError': 1,
        'robots_disallowed': 1, 'status_200': 2, 'status_301': 1, 'status_404': 1}
    assert statistics.status_counts() == {200: 2, 301: 1, 404: 1}


def test_crawl_statistics_counts_are_typed():
    statistics = CrawlStatistics(keep_statistics=False)
    for statistic in sample_statistics():
        statistics.add(statistic)
    assert statistics.statuses == {200: 2, 301: 1, 404: 1}
    assert statistics.failures == {'TimeoutError': 1}
    assert statistics.other_types == {'application/pdf': 1}
    assert statistics.categories == {
        'html': 1, 'html_bytes': 100, 'error_page': 1, 'error_page_bytes': 9,
        'redirect': 1, 'other': 1, 'other_bytes': 7, 'fail': 1, 'robots_disallowed': 1}
    # The flat names are made for the report and the summary, from the typed counts.
    statistics.statuses[503] += 1
    assert statistics.counters['status_503'] == 1 and statistics.status_counts()[503] == 1


def test_crawl_statistics_report_and_summary():
    statistics = CrawlStatistics(max_tasks=3)
    for statistic in sample_statistics():
        statistics.add(statistic, restored=statistic.status == 404)
    statistics.finish(todo=2, interrupted=True)
    report = statistics.report()
    assert report.startswith('Interrupted after 6 urls in ')
    assert ' urls/sec) (max_tasks=3: ' in report.splitlines()[0]
    assert 'Resumed: 1 urls were done before' in report
    assert report.splitlines()[-3:-1] == ['Todo: 2', 'Done: 6']
    assert '   status_200          2' in report
    summary = statistics.summary()
    assert (summary['urls'], summary['todo'], summary['interrupted']) == (6, 2, True)
    assert summary['counters']['fail_TimeoutError'] == 1


def test_fetch_statistic_round_trip_and_report_lines():
    html, redirect, pdf, failed = sample_statistics()[:4]
    assert FetchStatistic.from_dict(html.to_dict()) == html
    assert url_report_line(html) == 'http://a/ 200 text/html; charset=utf-8 utf-8 100 2/3'
    assert url_report_line(redirect) == 'http://a/go 301 redirect http://a/'
    assert url_report_line(pdf) == 'http://a/f.pdf 200 application/pdf None 7'
    assert url_report_line(failed) == 'http://a/x error TimeoutError: too slow'


def test_progress_line_rewrites_itself(io_loop):
    crawler = collections.namedtuple('Crawler', 'statistics frontier')(CrawlStatistics(),
                                                                        Frontier())
    crawler.statistics.add(sample_statistics()[0])
    crawler.frontier.put(Item('a/0', 'a'))
    stream = six.StringIO()  # native strings, as sys.stderr takes them
    progress = ProgressLine(crawler, stream)
    progress.show()
    progress.stop()
    first, erased = stream.getvalue().split('\r')[1:3]
    assert first.startswith('1 done, 1 queued, 0 in flight, ')
    assert erased == ' ' * len(first)


# -- reading responses ------------------------------------------------------------------------

def test_retry_after_seconds():
    assert retry_after_seconds(HTTPHeaders({'Retry-After': '120'})) == 120.0
    assert retry_after_seconds(HTTPHeaders({})) is None
    assert retry_after_seconds(HTTPHeaders({'Retry-After': 'soon'})) is None
    date = 'Wed, 21 Oct 2015 07:28:00 GMT'
    assert retry_after_seconds(HTTPHeaders({'Retry-After': date}),
                               now=1445412480 - 30) == 30.0
    assert retry_after_seconds(HTTPHeaders({'Retry-After': date}), now=1445412480 + 5) == 0.0


def test_describe_exception():
    assert describe_exception(ValueError('bad')) == 'ValueError: bad'
    assert describe_exception(KeyError()) == 'KeyError'
