"""``--collect FILE`` and ``--status`` of a crawl on Redis (crawler/collect.py), against a
real redis-server (tests/redis_server.py): the test fills the crawl's store itself, as
workers would, and reads the file the collector writes, in this process and as a
``python -m tinytornado.crawler`` killed with SIGKILL and run again.
"""
from __future__ import absolute_import, division, print_function

import io
import json
import os
import signal
import subprocess
import sys

import pytest

import tinytornado
from tinytornado import gen
from tinytornado.crawler.application.cli import main
from tinytornado.crawler.application.collect import (
    EXIT_NO_CRAWL, EXIT_NO_REDIS, CollectError, Collector, position_path, status_lines)
from tinytornado.crawler.engine import WorkItem
from tinytornado.crawler.output import statistic_line
from tinytornado.crawler.redisclient import RedisClient
from tinytornado.crawler.redisstore import RedisWorkStore

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(tinytornado.__file__)))
CRAWL = 'crawl'


def statistic(url, n):
    """A record as a worker stores it: the JSON of a statistic's dict, not sorted."""
    return dict(url=url, status=200, size=1000 + n, elapsed=n / 7.0, tries=1,
                title=u'p\u00e4ge %d' % n, error=None)


def url_of(n):
    return 'http://127.0.0.1:1/page/%d' % n


class Crawl(object):
    """A crawl in a real Redis, driven by the test as a worker would drive it."""

    def __init__(self, server):
        self.server = server
        self.client = RedisClient(server.url(), backoff_base=0.01, backoff_max=0.1)
        self.store = RedisWorkStore(self.client, CRAWL, WorkItem)
        self.finished = []  # the statistics finished, in order

    @gen.coroutine
    def start(self, pages):
        created, _ = yield self.store.start({'roots': [url_of(0)]}, [
            WorkItem(url_of(n), '127.0.0.1:1', 0, 10, 0) for n in range(pages)])
        assert created

    @gen.coroutine
    def finish(self, count):
        """Lease and finish `count` URLs (their records in shuffled key order)."""
        for _ in range(count):
            item = yield self.store.lease()
            fields = statistic(item.url, int(item.url.rsplit('/', 1)[1]))
            record = json.dumps(fields)  # as it comes, not sorted: the line is
            assert (yield self.store.done(item, record)) == []
            self.finished.append(fields)

    def expected_text(self):
        return u''.join(statistic_line(fields) for fields in self.finished)

    def close(self):
        self.client.close()


@pytest.fixture
def crawl(redis_server, io_loop):
    crawl = Crawl(redis_server)
    yield crawl
    crawl.close()


def read_text(path):
    with io.open(path, encoding='utf-8') as f:
        return f.read()


def test_a_finished_crawl_is_collected_once_whole_and_a_rerun_adds_nothing(crawl, tmpdir):
    path = str(tmpdir.join('all.jsonl'))
    yield crawl.start(2500)  # more than one page of the stream
    yield crawl.finish(2500)
    assert (yield Collector(crawl.store, path).collect()) == 2500
    text = read_text(path)
    assert text == crawl.expected_text()
    with io.open(position_path(path), encoding='utf-8') as f:
        position = json.load(f)
    assert position['size'] == len(text.encode('utf-8'))
    assert (yield Collector(crawl.store, path).collect()) == 0
    assert read_text(path) == text


def test_collecting_goes_on_while_the_crawl_runs_and_ends_when_it_is_over(crawl, tmpdir):
    path = str(tmpdir.join('all.jsonl'))
    news = []
    collector = Collector(crawl.store, path, poll_interval=0.02, on_wait=news.append)
    collecting = collector.collect()
    yield gen.sleep(0.1)  # several polls of a crawl not started: one line of news
    assert news == ['waiting for crawl crawl to start']
    yield crawl.start(30)
    for _ in range(2):
        yield crawl.finish(10)
        # Written as they finish, and the collector goes on while the crawl is not over.
        yield wait_until(lambda: os.path.exists(path) and
                         read_text(path) == crawl.expected_text())
        assert not collecting.done()
    yield crawl.finish(10)
    assert (yield collecting) == 30
    assert read_text(path) == crawl.expected_text()


def test_a_rerun_cuts_what_followed_the_position_and_writes_it_again(crawl, tmpdir):
    path = str(tmpdir.join('all.jsonl'))
    yield crawl.start(10)
    yield crawl.finish(4)
    collector = Collector(crawl.store, path)
    with io.open(path, 'wb'):
        collector._save_position('0', 0)  # as a first run leaves it
    with io.open(path, 'ab') as output:
        yield collector._drain(output)
    yield crawl.finish(6)
    # Killed after writing more lines, the last torn, and before saving the position.
    with io.open(path, 'ab') as f:
        f.write(statistic_line(crawl.finished[4]).encode('utf-8'))
        f.write(statistic_line(crawl.finished[5]).encode('utf-8')[:9])
    assert (yield Collector(crawl.store, path).collect()) == 6
    assert read_text(path) == crawl.expected_text()


def test_files_a_collect_did_not_write_are_refused(crawl, tmpdir):
    yield crawl.start(1)
    foreign = tmpdir.join('foreign.jsonl')
    foreign.write('{"url": "x"}\n')
    with pytest.raises(CollectError) as raised:
        yield Collector(crawl.store, str(foreign)).collect()
    assert 'was not written by --collect' in str(raised.value)
    assert foreign.read() == '{"url": "x"}\n'
    shorter = tmpdir.join('shorter.jsonl')
    shorter.write('{}\n')
    tmpdir.join('shorter.jsonl.position').write('{"entry": "1-0", "size": 100}\n')
    with pytest.raises(CollectError) as raised:
        yield Collector(crawl.store, str(shorter)).collect()
    assert 'shorter than its position' in str(raised.value)
    tmpdir.join('bad.jsonl.position').write('nonsense')
    with pytest.raises(CollectError):
        Collector(crawl.store, str(tmpdir.join('bad.jsonl')))


def test_status_lines():
    assert status_lines('news', 'redis://h:1/0', dict(started=None)) == [
        'crawl news at redis://h:1/0: not started (nothing of it in this Redis)']
    status = dict(queued=120, delayed=3, leased=8, finished=1000, seen=1131, hosts=3,
                  started=1000.0, now=1125.0, over=False)
    assert status_lines('news', 'redis://h:1/0', status) == [
        'crawl news at redis://h:1/0: running',
        '  seen          1131 URLs on 3 hosts',
        '  finished      1000 (88.4% of those seen)',
        '  queued         120, and 3 retries waiting for their time',
        '  leased           8 (being fetched by workers now)',
        '  rate           8.0 pages/s over the 125.0 s since the start',
    ]


# -- the command line ----------------------------------------------------------------------

def run_main(argv, capsys):
    """main(argv) in this process: (status, stdout, stderr); an argparse exit counts."""
    try:
        status = main(argv)
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def test_status_from_the_command_line(crawl, redis_server, io_loop, capsys):
    # A plain test, not a coroutine: main runs the loop itself, between the crawl's steps.
    redis = ['--redis', redis_server.url(), '--crawl-id', CRAWL]
    status, out, _ = run_main(redis + ['--status'], capsys)
    assert (status, out.splitlines()) == (EXIT_NO_CRAWL, ['crawl crawl at redis://127.0.0.1:%d/0: not '
                                              'started (nothing of it in this Redis)'
                                              % redis_server.port])
    io_loop.run_sync(lambda: crawl.start(5))
    io_loop.run_sync(lambda: crawl.finish(2))
    status, out, _ = run_main(redis + ['--status'], capsys)
    lines = out.splitlines()
    assert status == 0 and lines[0].endswith(': running')
    assert lines[1:5] == ['  seen             5 URLs on 1 hosts',
                          '  finished         2 (40.0% of those seen)',
                          '  queued           3, and 0 retries waiting for their time',
                          '  leased           0 (being fetched by workers now)']
    io_loop.run_sync(lambda: crawl.finish(3))
    status, out, _ = run_main(redis + ['--status'], capsys)
    assert out.splitlines()[0].endswith(': over')


def test_command_line_mistakes_are_one_line(redis_server, tmpdir, capsys):
    redis = ['--redis', redis_server.url(), '--crawl-id', CRAWL]
    foreign = tmpdir.join('foreign.jsonl')
    foreign.write('x\n')
    for argv, message in [
            (['--status'], '--status needs --redis URL and --crawl-id NAME'),
            (['--redis', redis_server.url(), '--collect', 'x'], '--collect needs --redis'),
            (redis + ['--status', '--collect', 'x'], '--collect and --status go separately'),
            (redis + ['--status', 'http://a/'], '--status takes no URL'),
            (['--redis', 'http://h/', '--crawl-id', 'c', '--status'], 'not a redis://'),
            (redis[:3] + ['a{b', '--status'], 'a crawl id must be'),
            (redis + ['--collect', str(foreign)], 'was not written by --collect')]:
        status, _, err = run_main(argv, capsys)
        assert status == 2, argv
        assert message in err and len(err.splitlines()) == 1, (argv, err)


def test_an_unreachable_redis_is_one_line_and_its_own_status(tmpdir, capsys):
    # --redis-wait 0: one try (the default waits 10 minutes, saying so).
    status, _, err = run_main(['--redis', 'redis://127.0.0.1:1/0', '--crawl-id', 'c',
                               '--status', '--redis-wait', '0'], capsys)
    assert status == EXIT_NO_REDIS
    assert err.startswith('tinycrawl: error: redis://127.0.0.1:1/0: ')
    assert 'within 0s' in err and 'refused' in err.lower() and len(err.splitlines()) == 1


def collect_process(server, path):
    path_list = os.environ.get('PYTHONPATH')
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT + (os.pathsep + path_list
                                                      if path_list else ''))
    return subprocess.Popen([sys.executable, '-m', 'tinytornado.crawler', '--redis',
                             server.url(), '--crawl-id', CRAWL, '--collect', path],
                            cwd=PACKAGE_ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


@gen.coroutine
def wait_until(condition, timeout=30):
    waited = 0.0
    while not condition():
        assert waited < timeout, 'timed out'
        yield gen.sleep(0.02)
        waited += 0.02


@pytest.mark.gen_test(timeout=90)
def test_a_collect_killed_again_and_again_writes_each_line_once(crawl, redis_server, tmpdir):
    path = str(tmpdir.join('all.jsonl'))
    yield crawl.start(3000)
    for round_number in range(5):
        # The size before the round: read after crawl.finish, it could already include all
        # the round's lines, and the wait for more would never end (CI's 3.6 run).
        size = os.path.getsize(path) if os.path.exists(path) else 0
        process = collect_process(redis_server, path)
        yield crawl.finish(500)
        # Killed once it has written something this round, wherever it is then.
        yield wait_until(lambda: os.path.exists(path) and os.path.getsize(path) > size)
        process.send_signal(signal.SIGKILL)
        process.communicate()
    process = collect_process(redis_server, path)
    yield crawl.finish(500)
    yield wait_until(lambda: process.poll() is not None)
    _, err = process.communicate()
    assert process.returncode == 0, err
    assert err.decode('utf-8').endswith('lines appended; the crawl is over\n')
    assert read_text(path) == crawl.expected_text()
