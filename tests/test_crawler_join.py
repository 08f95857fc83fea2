"""Joining a shared crawl is explicit, as ``python -m tinytornado.crawler`` processes: one
given no URL never starts a crawl of its own; it waits (saying so once on stderr) for
another process to start it, or exits 2 naming the id after ``--join-timeout``; and
``--status`` of a crawl id nobody started exits with EXIT_NO_CRAWL.
"""
from __future__ import absolute_import, division, print_function

import collections
import io
import json
import os

from tinytornado import gen
from tinytornado.crawler.__main__ import EXIT_USAGE
from tinytornado.crawler.collect import EXIT_NO_CRAWL
from tinytornado.crawler.demosite import Site

from crawler_sites import UNTHROTTLED_ARGS
from test_crawler_cli import child, start_crawl, wait_for, waits_for_processes


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


@waits_for_processes
def test_a_joiner_started_first_waits_and_crawls_its_share(start_redis_server, serve,
                                                          tmpdir):
    server, origin = serve(Site(seed=4, pages=30))
    redis = start_redis_server()
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
    (joined, _, _), (started, _, _) = yield [wait_for(joiner, timeout=40),
                                             wait_for(starter, timeout=40)]
    assert (joined, started) == (0, 0)
    with io.open(joiner_err, encoding='utf-8') as err:
        assert err.read().splitlines() == [waiting_line('late', 60)]
    urls = collections.Counter()
    for path in outputs:
        with io.open(path, encoding='utf-8') as lines:
            urls.update(json.loads(line)['url'] for line in lines)
    assert len(urls) > 30 and set(urls.values()) == {1}
