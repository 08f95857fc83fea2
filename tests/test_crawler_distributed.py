"""One crawl in many processes over a real redis-server: issue 17's proof.

- 4 worker processes, 2 on Python 2.7 and 2 on 3.x, crawl a generated site and get
  exactly the single-process URL set;
- workers killed with SIGKILL every second or two (and started again) lose no URL and
  write no line twice, in the union of their --output files and in --collect's file;
- a Redis restart mid-crawl (appendonly on) loses nothing.

The site is served from the test's loop (the `serve` fixture), the workers are
``python -m tinytornado.crawler --redis ... --crawl-id ...`` processes. The other
interpreter (2.7 when the tests run on 3.x, a 3.x when they run on 2.7) is looked for in
$TINYTORNADO_OTHER_PYTHON, then among the virtualenvs beside this one's (.ci/run's
``.ci/venvs/VERSION``, or a developer's venvs): the first whose Python has the crawler's
dependencies, running this checkout's tinytornado (PYTHONPATH). Without one, the tests that
need it skip, saying so.
"""
from __future__ import absolute_import, division, print_function

import collections
import io
import json
import os
import random
import signal
import subprocess
import sys

import pytest

import tinytornado
from tinytornado import gen
from tinytornado.crawler.demo.website import Site

from crawler_sites import UNTHROTTLED_ARGS

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(tinytornado.__file__)))
CRAWL = 'proof'
# Crawl-wide politeness off (the store keeps it, which tests/test_store_conformance.py
# checks), a lease short enough that a killed worker's URLs come back within the test.
WORKER_ARGS = UNTHROTTLED_ARGS + ['--max-tasks', '4', '--lease-seconds', '2',
                                  '--no-progress', '-q']

waits_for_processes = pytest.mark.gen_test(timeout=240)
one_loop_kind = pytest.mark.own_loop_only('the crawl runs in worker processes: one kind of '
                                          'loop serving the site is enough')

_probed = {}


def _probe(python):
    """The major version of `python` if it runs this checkout's crawler, else None."""
    if python not in _probed:
        try:
            output = subprocess.check_output(
                [python, '-c', 'import sys, tinytornado.crawler.application.cli, '
                 'tinytornado.crawler.redisstore; print(sys.version_info[0])'],
                cwd=PACKAGE_ROOT, env=child_env(), stderr=subprocess.STDOUT)
            _probed[python] = int(output.decode('ascii').split()[-1])
        except (OSError, subprocess.CalledProcessError, ValueError):
            _probed[python] = None
    return _probed[python]


@pytest.fixture
def other_python():
    """An interpreter of the other major version with the crawler's dependencies; skip
    the test without one (at set-up: the test's coroutine would leave its timers)."""
    wanted = 3 if sys.version_info[0] == 2 else 2
    candidates = [os.environ.get('TINYTORNADO_OTHER_PYTHON')]
    venvs = os.path.dirname(sys.prefix)  # this interpreter's virtualenv's siblings
    if os.path.isdir(venvs):
        candidates += [os.path.join(venvs, name, 'bin', 'python')
                       for name in sorted(os.listdir(venvs), reverse=True)]
    for python in candidates:
        if python and os.path.isfile(python) and _probe(python) == wanted:
            return python
    pytest.skip('no Python %d with the crawler\'s dependencies found (set '
                '$TINYTORNADO_OTHER_PYTHON, or make a virtualenv beside %s)'
                % (wanted, sys.prefix))


def child_env():
    path = os.environ.get('PYTHONPATH')
    return dict(os.environ, PYTHONPATH=PACKAGE_ROOT + (os.pathsep + path if path else ''))


class Crawl(object):
    """The processes of one crawl on Redis, their files in `directory`."""

    def __init__(self, redis, root, directory, worker_args=()):
        self.redis = redis
        self.worker_args = WORKER_ARGS + list(worker_args)  # the last of an option wins
        self.root = root
        self.directory = directory
        self.outputs = []  # every worker's --output, in order of start
        self.workers = {}  # index -> Popen, those running
        self.collector = None

    def command(self, python, *args):
        return [python, '-m', 'tinytornado.crawler', '--redis', self.redis.url(),
                '--crawl-id', CRAWL] + list(args)

    def spawn(self, command, name):
        log = io.open(os.path.join(self.directory, name + '.log'), 'wb')
        try:
            return subprocess.Popen(command, cwd=PACKAGE_ROOT, env=child_env(),
                                    stdout=log, stderr=subprocess.STDOUT)
        finally:
            log.close()  # the child has its own

    def start_worker(self, index, python):
        output = os.path.join(self.directory, 'worker-%d.jsonl' % len(self.outputs))
        self.outputs.append(output)
        self.workers[index] = self.spawn(
            self.command(python, self.root, '--output', output, *self.worker_args),
            'worker-%d' % (len(self.outputs) - 1))

    def start_workers(self, pythons, count=4):
        """Workers 0..count-1, taking turns on `pythons`."""
        for index in range(count):
            self.start_worker(index, pythons[index % len(pythons)])

    def start_collector(self):
        self.collector = self.spawn(self.command(sys.executable, '--collect',
                                                 self.collected_path()), 'collect')

    def collected_path(self):
        return os.path.join(self.directory, 'collected.jsonl')

    def log(self, name):
        with io.open(os.path.join(self.directory, name + '.log'), encoding='utf-8',
                     errors='replace') as f:
            return f.read()

    def kill_worker(self, index):
        process = self.workers.pop(index)
        process.send_signal(signal.SIGKILL)
        process.wait()

    @gen.coroutine
    def wait_all(self, timeout=120):
        """Wait, without blocking the loop (it serves the site), for every process."""
        processes = list(self.workers.values()) + [self.collector]
        waited = 0.0
        while any(process.poll() is None for process in processes if process):
            if waited > timeout:
                for process in processes:
                    if process and process.poll() is None:
                        process.kill()
                raise AssertionError('the crawl did not end:\n' + self.log('collect'))
            yield gen.sleep(0.05)
            waited += 0.05
        for index, process in self.workers.items():
            assert process.returncode == 0, self.log('worker-%d' % index)
        if self.collector is not None:
            assert self.collector.returncode == 0, self.log('collect')

    def worker_urls(self):
        """Counter of the URLs of the whole lines of every worker's output."""
        return url_counter(self.outputs)

    def collected_urls(self):
        return url_counter([self.collected_path()])

    @gen.coroutine
    def assert_each_url_once(self):
        """The workers' outputs and the collect's file each hold every URL of the
        single-process crawl once."""
        expected = yield single_process_urls(self.root, self.directory)
        written = self.worker_urls()
        collected = self.collected_urls()
        assert set(written) == expected == set(collected)
        assert max(written.values()) == 1 and max(collected.values()) == 1


def url_counter(paths):
    urls = collections.Counter()
    for path in paths:
        if not os.path.exists(path):
            continue
        with io.open(path, 'rb') as f:
            for line in f:
                if line.endswith(b'\n'):  # a killed worker's last line may be torn
                    urls[json.loads(line.decode('utf-8'))['url']] += 1
    return urls


def site_and_root(serve, pages=150, **options):
    site = Site(seed=17, pages=pages, **options)
    server, origin = serve(site)
    root = origin + '/'
    return site, server, root


@gen.coroutine
def single_process_urls(root, directory):
    """The URLs a plain crawl (no Redis) of `root` writes to its --output."""
    output = os.path.join(directory, 'single.jsonl')
    process = subprocess.Popen(
        [sys.executable, '-m', 'tinytornado.crawler', root, '--output', output] +
        UNTHROTTLED_ARGS + ['--max-tasks', '50', '--no-progress', '-q'], cwd=PACKAGE_ROOT,
        env=child_env(),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    while process.poll() is None:
        yield gen.sleep(0.05)
    assert process.returncode == 0, process.communicate()[0]
    urls = url_counter([output])
    assert max(urls.values()) == 1
    raise gen.Return(set(urls))


@waits_for_processes
@one_loop_kind
def test_four_workers_on_two_pythons_get_the_single_process_url_set(
        serve, redis_server, tmpdir, other_python):
    pythons = [sys.executable, other_python]
    # Every page slow: the crawl lasts a second or more, several times what either Python
    # takes to start, so that the workers of the later one still find work (with a fifth
    # of the pages slow it could end first, on a busy machine).
    site, _, root = site_and_root(serve, slow_fraction=1.0, slow_delay=0.1)
    single = yield single_process_urls(root, str(tmpdir))
    crawl = Crawl(redis_server, root, str(tmpdir))
    crawl.start_workers(pythons)
    yield crawl.wait_all()
    crawl.start_collector()
    yield crawl.wait_all()
    urls = crawl.worker_urls()
    assert set(urls) == single and max(urls.values()) == 1
    by_python = [sum(len(url_counter([crawl.outputs[index]])) for index in (0, 2)),
                 sum(len(url_counter([crawl.outputs[index]])) for index in (1, 3))]
    assert min(by_python) > 0, 'the workers of one Python fetched nothing: %r' % by_python
    collected = crawl.collected_urls()
    assert set(collected) == single and max(collected.values()) == 1


@waits_for_processes
@one_loop_kind
def test_workers_killed_again_and_again_lose_nothing_and_repeat_nothing(
        serve, redis_server, tmpdir, other_python):
    pythons = [sys.executable, other_python]
    site, server, root = site_and_root(serve, pages=250, slow_fraction=0.8,
                                       slow_delay=0.6)
    # Slow enough for a kill every second or two while it lasts.
    crawl = Crawl(redis_server, root, str(tmpdir), ['--max-tasks', '2'])
    crawl.start_workers(pythons)
    crawl.start_collector()
    rng = random.Random(17)
    kills = 0
    while all(process.poll() is None for process in crawl.workers.values()) and kills < 12:
        yield gen.sleep(rng.uniform(1.0, 2.0))
        index = rng.randrange(4)
        if crawl.workers[index].poll() is not None:
            break  # the crawl is ending
        crawl.kill_worker(index)
        kills += 1
        if kills == 3:  # the collector too, once
            crawl.collector.send_signal(signal.SIGKILL)
            crawl.collector.wait()
            crawl.start_collector()
        crawl.start_worker(index, pythons[index % 2])
    assert kills >= 6, 'the crawl ended before the kills: make the site slower'
    yield crawl.wait_all()
    expected = yield single_process_urls(root, str(tmpdir))
    collected = crawl.collected_urls()
    assert set(collected) == expected
    assert max(collected.values()) == 1
    written = crawl.worker_urls()
    assert max(written.values()) == 1
    assert set(written) <= expected
    # A worker killed between its `done` and the write of its line loses that line from
    # its own file (the stream has it, and so --collect's file): at most one per URL in
    # flight (--max-tasks) at the kill.
    assert len(expected - set(written)) <= kills * 2


@waits_for_processes
@one_loop_kind
def test_a_redis_restart_mid_crawl_loses_nothing(serve, start_redis_server, tmpdir):
    redis = start_redis_server(appendonly='yes')
    site, server, root = site_and_root(serve, slow_fraction=0.5, slow_delay=0.2)
    crawl = Crawl(redis, root, str(tmpdir))
    crawl.start_workers([sys.executable])
    crawl.start_collector()
    while len(server.requests) < len(site.paths()) // 3:
        yield gen.sleep(0.05)
    redis.stop()  # SIGTERM: the append-only file is flushed, as on any clean restart
    yield gen.sleep(0.5)  # the workers meet a Redis that is not there
    redis.start()
    yield crawl.wait_all()
    yield crawl.assert_each_url_once()


@waits_for_processes
@one_loop_kind
def test_workers_option_crawls_in_n_processes_with_a_file_each(serve, redis_server, tmpdir):
    site, _, root = site_and_root(serve, slow_fraction=0.2, slow_delay=0.05)
    crawl = Crawl(redis_server, root, str(tmpdir))
    output = os.path.join(str(tmpdir), 'out.jsonl')
    crawl.workers[0] = crawl.spawn(crawl.command(sys.executable, root, '--workers', '3',
                                                 '--output', output, *WORKER_ARGS), 'parent')
    crawl.outputs = ['%s.%d' % (output, n) for n in (1, 2, 3)]
    yield crawl.wait_all()
    assert crawl.log('parent').count('Finished ') == 3  # each worker's report
    urls = crawl.worker_urls()
    assert max(urls.values()) == 1
    assert set(urls) == (yield single_process_urls(root, str(tmpdir)))
