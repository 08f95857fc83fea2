"""A Redis outage under a shared crawl (issue 26, "outages survived"): workers and
``--collect`` wait for Redis (``--redis-wait``), saying so once, and go on where they were
with nothing lost; SIGTERM while they wait prints the report and exits 130; past the wait,
one line and exit 4.

A real redis-server (tests/redis_server.py) is stopped under worker processes
(tests/test_crawler_distributed.py's `Crawl`); an outage of 60 s that the workers and
the collect wait out is a rule of the conformance suite (tests/test_store_conformance.py,
with `outage_crawl`). Run with TINYTORNADO_EXTENSION=0 too: the workers inherit it.
"""
from __future__ import absolute_import, division, print_function

import os
import signal
import subprocess
import sys

from test_crawler_collect import wait_until
from test_crawler_distributed import (PACKAGE_ROOT, WORKER_ARGS, Crawl, child_env,
                                      one_loop_kind, site_and_root, waits_for_processes)

# Not -q: the wait is a warning. A lease longer than the outage: leases that expire
# under a fetch are another matter (issue 26, item 2).
OUTAGE_ARGS = [arg for arg in WORKER_ARGS if arg != '-q'] + [
    '--lease-seconds', '60', '--redis-wait', '30']


def outage_crawl(redis, root, directory, *extra):
    crawl = Crawl(redis, root, directory)
    crawl.worker_args = OUTAGE_ARGS + list(extra)
    return crawl


@waits_for_processes
@one_loop_kind
def test_sigterm_while_redis_is_down_prints_the_report_and_exits_130(
        serve, start_redis_server, tmpdir):
    redis = start_redis_server()
    site, server, root = site_and_root(serve, slow_fraction=1.0, slow_delay=0.3)
    crawl = outage_crawl(redis, root, str(tmpdir))
    crawl.start_workers([sys.executable], count=1)
    crawl.start_collector()
    yield wait_until(lambda: len(server.requests) >= 5)
    redis.stop()
    yield wait_until(lambda: 'unreachable' in crawl.log('worker-0') and
                   'unreachable' in crawl.log('collect'))
    for process in [crawl.workers[0], crawl.collector]:
        process.send_signal(signal.SIGTERM)
    yield wait_until(lambda: all(p.poll() is not None
                               for p in [crawl.workers[0], crawl.collector]))
    log = crawl.log('worker-0')
    assert crawl.workers[0].returncode == 130, log
    assert 'Interrupted after' in log and 'Traceback' not in log, log  # the report
    log = crawl.log('collect')
    assert crawl.collector.returncode == 130, log
    assert 'interrupted after' in log and 'Traceback' not in log, log


def run_tinycrawl(args):
    process = subprocess.Popen([sys.executable, '-m', 'tinytornado.crawler'] + args,
                               cwd=PACKAGE_ROOT, env=child_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    out, err = process.communicate()
    return process.returncode, out.decode('utf-8'), err.decode('utf-8')


@waits_for_processes
@one_loop_kind
def test_the_wait_gives_up_after_redis_wait_with_one_line(serve, start_redis_server, tmpdir):
    redis = start_redis_server()
    site, server, root = site_and_root(serve, slow_fraction=1.0, slow_delay=0.3)
    crawl = outage_crawl(redis, root, str(tmpdir), '--redis-wait', '2')
    crawl.start_workers([sys.executable], count=1)
    yield wait_until(lambda: len(server.requests) >= 3)
    redis.stop()
    yield wait_until(lambda: crawl.workers[0].poll() is not None, timeout=60)
    log = crawl.log('worker-0')
    assert crawl.workers[0].returncode == 4, log
    assert 'Traceback' not in log, log
    error = [line for line in log.splitlines() if 'error' in line]
    assert len(error) == 1 and error[0].startswith('tinycrawl: error: --redis redis://'), log
    assert 'no connection to' in error[0] and 'within 2s (none for ' in error[0], log
    # --status and --collect alike, from the start.
    for view in [['--status'], ['--collect', os.path.join(str(tmpdir), 'c.jsonl')]]:
        status, out, err = run_tinycrawl(['--redis', redis.url(), '--crawl-id', 'x',
                                          '--redis-wait', '1'] + view)
        lines = err.splitlines()
        assert status == 4 and 'Traceback' not in err, err
        assert 'unreachable' in lines[0] and 'commands wait up to 1 s' in lines[0], err
        assert lines[-1].startswith('tinycrawl: error: redis://') and len(lines) == 2, err
