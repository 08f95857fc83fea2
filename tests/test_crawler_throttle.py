"""The crawler's polite defaults: at most 2 requests in flight to a host, and a delay adapted
to the host's latency by AutoThrottle's rule, unless a fixed delay (``delay``, robots.txt's
Crawl-delay) is given.

The rule is checked on its own, then driving a `Frontier` on a virtual clock against a
simulated host whose latency and answers each test chooses (exact times), then in real
crawls of a server the test starts, as the server sees them.
"""
from __future__ import absolute_import, division, print_function

import collections

import pytest

from tinytornado import gen
from tinytornado.crawler.application.cli import _option_values, build_parser, main
from tinytornado.crawler.engine import DEFAULT_OPTIONS, Crawler
from tinytornado.crawler.frontier import Frontier
from tinytornado.crawler.politeness import AutoThrottle
from tinytornado.ioloop import IOLoop

from crawler_sites import Pages, links, request_log, robots_txt

SLACK = 0.01  # loop timers fire at their deadline or a little later, never earlier

Item = collections.namedtuple('Item', 'url host')


# -- the rule ---------------------------------------------------------------------------------

def test_the_delay_moves_halfway_to_latency_over_target_concurrency():
    assert AutoThrottle().next_delay(1.0, 0.2, ok=True) == pytest.approx(0.6)
    assert AutoThrottle(target_concurrency=2.0).next_delay(1.0, 0.2, ok=True) == \
        pytest.approx(0.55)
    assert AutoThrottle().next_delay(0.1, 0.5, ok=True) == pytest.approx(0.3)


def test_an_answer_that_is_not_a_200_never_shortens_the_delay():
    throttle = AutoThrottle()
    assert throttle.next_delay(1.0, 0.01, ok=False) == 1.0
    assert throttle.next_delay(0.1, 0.5, ok=False) == pytest.approx(0.3)  # but lengthens it


def test_the_delay_stays_within_its_bounds():
    throttle = AutoThrottle(start_delay=5.0, min_delay=0.5, max_delay=2.0)
    assert throttle.start_delay == 2.0
    assert throttle.next_delay(0.5, 0.0, ok=True) == 0.5
    assert throttle.next_delay(2.0, 30.0, ok=False) == 2.0
    assert AutoThrottle(start_delay=0.0, min_delay=0.5).start_delay == 0.5


@pytest.mark.parametrize('options', [
    {'target_concurrency': 0}, {'min_delay': -1.0}, {'start_delay': -1.0},
    {'min_delay': 2.0, 'max_delay': 1.0},
])
def test_impossible_throttles_are_refused(options):
    with pytest.raises(ValueError):
        AutoThrottle(**options)


# -- the frontier on a virtual clock, against a simulated host -------------------------------

@gen.coroutine
def serve_simulated(frontier, answers, workers=2):
    """Take every item with `workers` workers, each "sending" its request and getting an
    answer after the latency `answers` gives, as (latency, ok) pairs in order of sending;
    [(loop time of sending, url)]."""
    sent = []
    answers = iter(answers)

    @gen.coroutine
    def work():
        while True:
            item = yield frontier.get()
            sending = frontier.request_started(item.host)
            sending.sent()
            sent.append((IOLoop.current().time(), item.url))
            latency, ok = next(answers)
            yield gen.sleep(latency)
            sending.ended()
            sending.answered(ok)
            frontier.task_done(item)

    running = [work() for _ in range(workers)]
    yield frontier.join()
    for worker in running:
        worker.cancel()
    raise gen.Return(sent)


def throttled_frontier(count, hosts='a', max_per_host=2, **throttle_options):
    throttle = AutoThrottle(**throttle_options)
    frontier = Frontier(max_per_host, throttle.start_delay, throttle)
    for host in hosts:
        for n in range(count):
            frontier.put(Item('%s/%d' % (host, n), host))
    return frontier


def gaps(sent):
    return [later - earlier for (earlier, _), (later, _) in zip(sent, sent[1:])]


def test_the_delay_adapts_to_a_slow_host(virtual_clock):
    frontier = throttled_frontier(6, start_delay=1.0)
    sent = yield serve_simulated(frontier, [(0.2, True)] * 6)
    # 1.0 until the first answer (at 0.2), then halfway to 0.2 after each answer.
    assert gaps(sent) == pytest.approx([0.6, 0.4, 0.3, 0.25, 0.225])
    assert frontier.host_delay('a') == pytest.approx(0.2125)


@pytest.mark.gen_test(timeout=100)
def test_the_delay_aims_at_target_concurrency_requests_in_flight(virtual_clock):
    frontier = throttled_frontier(40, start_delay=0.0, target_concurrency=2.0)
    sent = yield serve_simulated(frontier, [(1.0, True)] * 40)
    assert frontier.host_delay('a') == pytest.approx(0.5, abs=0.01)
    assert min(gaps(sent)[-10:]) == pytest.approx(0.5, abs=0.01)


def test_errors_answered_fast_never_make_a_host_be_asked_sooner(virtual_clock):
    frontier = throttled_frontier(5, start_delay=0.5)
    sent = yield serve_simulated(frontier, [(0.01, False)] * 5)
    assert gaps(sent) == pytest.approx([0.5] * 4)


def test_a_slow_error_slows_the_host_down(virtual_clock):
    frontier = throttled_frontier(3, start_delay=0.2, max_per_host=1)
    sent = yield serve_simulated(frontier, [(1.0, False), (0.0, True), (0.0, True)])
    # After the error: (0.2 + 1.0) / 2 = 0.6; then each 200 answered at once halves it.
    assert gaps(sent) == pytest.approx([1.0, 0.3])
    assert frontier.host_delay('a') == pytest.approx(0.15)


@pytest.mark.gen_test(timeout=100)
def test_the_adapted_delay_stays_within_its_bounds(virtual_clock):
    frontier = throttled_frontier(6, start_delay=1.0, min_delay=0.4, max_delay=1.5)
    sent = yield serve_simulated(frontier, [(0.0, True)] * 3 + [(9.0, True)] * 3)
    assert min(gaps(sent)) >= 0.4 - 1e-9
    assert frontier.host_delay('a') == 1.5


def test_a_request_never_sent_counts_its_latency_from_its_start(virtual_clock):
    """A connection that timed out: no sending, a long wait, then a failure."""
    frontier = throttled_frontier(1, start_delay=0.1)
    item = yield frontier.get()
    sending = frontier.request_started('a')
    yield gen.sleep(2.0)
    sending.ended()
    sending.answered(False)
    frontier.task_done(item)
    assert frontier.host_delay('a') == pytest.approx(1.05)


def test_a_delay_set_for_a_host_is_not_adapted(virtual_clock):
    """robots.txt's Crawl-delay wins over the throttle."""
    frontier = throttled_frontier(4, hosts='ab', start_delay=1.0, max_per_host=1)
    frontier.set_host_delay('a', 0.3)
    sent = yield serve_simulated(frontier, [(0.05, True)] * 8)
    assert frontier.host_delay('a') == 0.3
    assert frontier.host_delay('b') < 0.3
    times_of_a = [when for when, url in sent if url.startswith('a/')]
    assert [later - earlier for earlier, later in zip(times_of_a, times_of_a[1:])
            ] == pytest.approx([0.3] * 3)


def test_each_host_has_its_own_adapted_delay(virtual_clock):
    frontier = throttled_frontier(1, hosts='ab', start_delay=1.0)
    item = yield frontier.get()
    sending = frontier.request_started(item.host)
    sending.sent()
    yield gen.sleep(3.0)
    sending.answered(True)
    assert (item.host, frontier.host_delay('a'), frontier.host_delay('b')) == ('a', 2.0, 1.0)
    frontier.task_done(item)
    frontier.task_done((yield frontier.get()))


def test_a_fixed_delay_is_not_adapted(virtual_clock):
    frontier = Frontier(max_per_host=2, delay=0.25)
    for n in range(3):
        frontier.put(Item('a/%d' % n, 'a'))
    sent = yield serve_simulated(frontier, [(1.0, True)] * 3)
    assert gaps(sent) == pytest.approx([0.25, 0.75])  # the second waits for a free slot
    assert frontier.host_delay('a') == 0.25


# -- the Crawler's defaults and options -------------------------------------------------------

def test_the_crawler_is_polite_by_default():
    crawler = Crawler(['http://example.com/'])
    assert (crawler.options.max_per_host, crawler.options.delay) == (2, None)
    throttle = crawler.frontier.throttle
    assert (throttle.target_concurrency, throttle.start_delay, throttle.min_delay,
            throttle.max_delay) == (1.0, 1.0, 0.0, 10.0)
    assert crawler.frontier.host_delay('example.com') == 1.0


def test_a_fixed_delay_turns_the_throttle_off():
    crawler = Crawler(['http://example.com/'], delay=0.5, max_per_host=None)
    assert crawler.frontier.throttle is None
    assert crawler.frontier.host_delay('example.com') == 0.5
    assert crawler.frontier.max_per_host is None


@pytest.mark.parametrize('options', [
    {'max_per_host': 0}, {'delay': -1.0}, {'target_concurrency': 0.0},
    {'min_delay': 3.0, 'max_delay': 2.0},
])
def test_impossible_politeness_options_are_refused(options):
    with pytest.raises(ValueError):
        Crawler(['http://example.com/'], **options)


def slow_pages(count, delay):
    pages = dict(('/p%d' % n, {'body': '', 'delay': delay}) for n in range(count))
    pages['/'] = links(*sorted(pages))
    return pages


def test_at_most_two_requests_in_flight_to_a_host_by_default(serve):
    server, origin = serve(Pages(slow_pages(8, 0.05)))
    # No start delay: once the root has answered fast the delay is short, and only the
    # cap keeps the slow pages from all being asked at once.
    # The rate ceiling lifted: at 5/s, 50 ms pages would never overlap.
    statistics = yield Crawler([origin + '/'], max_tasks=10, start_delay=0.0,
                               max_rate=0).crawl()
    assert statistics.urls == 9
    assert server.peak_active == 2


def test_max_per_host_and_delay_override_the_defaults(serve):
    server, origin = serve(Pages(slow_pages(8, 0.05)))
    statistics = yield Crawler([origin + '/'], max_tasks=10, max_per_host=3,
                               delay=0.0, max_rate=0).crawl()
    assert statistics.urls == 9
    assert server.peak_active == 3


def page_gaps(log):
    times = [when for path, when in log if path.startswith('/p')]
    return [later - earlier for earlier, later in zip(times, times[1:])]


@pytest.mark.gen_test(timeout=10)
def test_a_crawl_slows_down_for_a_slow_host(serve):
    server, origin = serve(Pages(slow_pages(6, 0.1)))
    log = request_log(server)
    crawler = Crawler([origin + '/'], obey_robots=False, start_delay=0.0, max_rate=0)
    yield crawler.crawl()
    # Every answer took 0.1 s at least: after 7 of them, from no delay, the delay is
    # 0.1 * (1 - 2 ** -7) at least, and the host saw the last pages that far apart.
    host = origin.split('//')[1]
    assert 0.1 * (1 - 2 ** -7) <= crawler.frontier.host_delay(host) < 1.0
    assert page_gaps(log)[0] < 0.05  # the delay was short while the root's answer was all
    assert min(page_gaps(log)[-2:]) >= 0.08 - SLACK


def test_a_fixed_delay_is_kept_whatever_the_host_answers(serve):
    server, origin = serve(Pages(slow_pages(4, 0.1)))
    crawler = Crawler([origin + '/'], obey_robots=False, delay=0.02, max_rate=0)
    yield crawler.crawl()
    assert crawler.frontier.host_delay(origin.split('//')[1]) == 0.02


def test_crawl_delay_wins_over_the_adapted_delay(serve):
    pages = slow_pages(3, 0.1)
    pages['/robots.txt'] = robots_txt('User-agent: *\nCrawl-delay: 0.05\n')
    server, origin = serve(Pages(pages))
    crawler = Crawler([origin + '/'], start_delay=0.5, max_rate=0)
    yield crawler.crawl()
    assert crawler.frontier.host_delay(origin.split('//')[1]) == 0.05


# -- the command line ---------------------------------------------------------------------------

def test_help_shows_every_default():
    parser = build_parser()
    with_defaults = [action for action in parser._actions if action.option_strings and
                     action.default not in (None, True, False, '==SUPPRESS==')]
    assert '--max-per-host' in [action.option_strings[0] for action in with_defaults]
    for action in with_defaults:
        assert '(default' in (action.help or ''), action.option_strings
    text = parser.format_help()
    assert '(default 2)' in text and 'adapted to the' in text
    assert '--target-concurrency' in text and '--max-delay' in text


def test_the_command_line_has_the_crawler_defaults():
    options = _option_values(build_parser().parse_args(['http://example.com/']))
    for name in ('max_per_host', 'delay', 'target_concurrency', 'start_delay', 'min_delay',
                 'max_delay'):
        assert options[name] == DEFAULT_OPTIONS[name], name


def test_the_command_line_passes_the_politeness_options():
    args = build_parser().parse_args([
        'http://example.com/', '--max-per-host', '4', '--delay', '0.5',
        '--target-concurrency', '3', '--start-delay', '2', '--min-delay', '0.1',
        '--max-delay', '20'])
    options = _option_values(args)
    assert [options[name] for name in ('max_per_host', 'delay', 'target_concurrency',
                                       'start_delay', 'min_delay', 'max_delay')
            ] == [4, 0.5, 3.0, 2.0, 0.1, 20.0]


def test_a_demo_crawl_with_throttle_options(io_loop, capsys):
    assert main(['--demo', '--demo-pages', '10', '--no-progress', '--start-delay', '0.01',
                 '--target-concurrency', '2', '--max-delay', '0.5']) == 0
    # The demo's report opens with what it crawled, then the numbers.
    assert capsys.readouterr().out.splitlines()[1].startswith('Finished ')
