"""Joining a shared crawl is explicit, as ``python -m tinytornado.crawler`` processes: one
given no URL never starts a crawl of its own; it waits (saying so once on stderr) for
another process to start it, or exits 2 naming the id after ``--join-timeout``; and
``--status`` of a crawl id nobody started exits with EXIT_NO_CRAWL. A joiner started
before the crawl, which then crawls its share, is a rule of the conformance suite
(tests/test_store_conformance.py).
"""
from __future__ import absolute_import, division, print_function

from tinytornado.crawler.application.cli import EXIT_USAGE
from tinytornado.crawler.application.collect import EXIT_NO_CRAWL

from test_crawler_cli import start_crawl, wait_for, waits_for_processes


def waiting_line(crawl_id, timeout):
    return ('tinycrawl: crawl %s has not been started: waiting up to %ss for it '
            '(--join-timeout)' % (crawl_id, timeout))


@waits_for_processes
def test_a_joiner_of_a_crawl_nobody_starts_exits_2_naming_it(start_redis_server):
    redis = start_redis_server()
    shared = ['--redis', redis.url(), '--crawl-id', 'nobody', '--no-progress']
    status, out, err = yield wait_for(start_crawl(*shared + ['--join-timeout', '1']))
    assert status == EXIT_USAGE and out == ''
    assert err.splitlines() == [
        waiting_line('nobody', 1),
        'tinycrawl: error: crawl nobody was not started in %s within 1s (--join-timeout): '
        'start it with its URLs, or check --crawl-id' % redis.url()]
    # It started nothing: the id is still free, and --status says there is no such crawl.
    status, out, err = yield wait_for(start_crawl(*shared + ['--status']))
    assert (status, err) == (EXIT_NO_CRAWL, '')
    assert out.splitlines() == ['crawl nobody at %s: not started (nothing of it in this '
                                'Redis)' % redis.url()]
