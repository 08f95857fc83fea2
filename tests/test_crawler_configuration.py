"""A crawl's configuration, resolved once (configuration.py): an option's requires and
excludes say the same from the Python API and the command line (exit 2); a journal's or
a Redis crawl's configuration is taken back the same by a crawl, ``--collect`` and
``--status``, through `configuration.resolve`, each process opening one Redis client (as
a real redis-server counts the connections), a collect stopped while that waits for
Redis saying so as a collect does; `Crawler(output=PATH)` opens its file and closes it.
"""
from __future__ import absolute_import, division, print_function

import io
import json
import signal
import subprocess

import pytest

from tinytornado.crawler.application import cli as command_line
from tinytornado.crawler.application.cli import EXIT_USAGE, main
from tinytornado.crawler.application.usage import COMMAND_LINE
from tinytornado.crawler.configuration import configure
from tinytornado.crawler.crawloptions import JOURNALED_OPTIONS, ConfigurationError
from tinytornado.crawler.demo.website import Site
from tinytornado.crawler.engine import Crawler
from tinytornado.crawler.journal import Journal, as_journaled
from tinytornado.crawler.redisclient import RedisClient
from tinytornado.crawler.workstore import SHARED_META_OPTIONS

from crawler_sites import UNTHROTTLED, UNTHROTTLED_ARGS
from test_crawler_cli import child

ROOT = 'http://example.com/'
NOWHERE = 'redis://127.0.0.1:1/0'  # never connected to: each mistake comes first


def cli_error(argv, capsys):
    """The one line of stderr of a command line refused with EXIT_USAGE."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize('options, argv, api_message, cli_message', [
    (dict(crawl_id='c'), ['--crawl-id', 'c'],
     'crawl_id names a crawl in Redis: it needs redis',
     '--crawl-id names a crawl in Redis: it needs --redis URL'),
    (dict(redis=NOWHERE), ['--redis', NOWHERE],
     'redis needs crawl_id', '--redis needs --crawl-id NAME'),
    (dict(redis=NOWHERE, crawl_id='c', state='s.db'),
     ['--redis', NOWHERE, '--crawl-id', 'c', '--state', 's.db'],
     'redis and state contradict each other: a shared crawl keeps its work in Redis, not '
     'in a journal',
     '--redis and --state contradict each other: a shared crawl keeps its work in Redis, '
     'not in a journal'),
    (dict(resume=True), ['--resume'], 'resume needs state', '--resume needs --state FILE'),
    (dict(max_tasks=0), ['--max-tasks', '0'], 'max_tasks must be at least 1 (got 0)',
     '--max-tasks must be at least 1 (got 0)'),
])
def test_a_rule_of_the_table_says_the_same_from_the_api_and_the_command_line(
        io_loop, tmpdir, capsys, options, argv, api_message, cli_message):
    with tmpdir.as_cwd():
        with pytest.raises(ConfigurationError) as raised:
            Crawler([ROOT], **options)
        assert str(raised.value) == api_message
        assert raised.value.describe(COMMAND_LINE) == cli_message
        assert cli_error([ROOT] + argv, capsys) == 'tinycrawl: error: ' + cli_message
        assert tmpdir.listdir() == []  # no journal made, nothing written


def test_the_command_line_only_rules_are_the_tables_too(capsys):
    assert cli_error(['-q', '-v'], capsys) == (
        'tinycrawl: error: -q/--quiet and -v/--verbose contradict each other: give one')
    assert cli_error(['--workers', '2', '--status', '--redis', NOWHERE, '--crawl-id', 'c'],
                     capsys) == 'tinycrawl: error: --workers and --status go separately'


class ResolveSpy(object):
    """Wraps the command line's `resolve`: the options and roots of each configuration it
    resolved, as resolve gave them."""

    def __init__(self, monkeypatch):
        self.resolved = []
        self._resolve = command_line.resolve
        monkeypatch.setattr(command_line, 'resolve', self)

    def __call__(self, *args, **kwargs):
        future = self._resolve(*args, **kwargs)
        future.add_done_callback(self._record)
        return future

    def _record(self, future):
        configuration = future.result()
        self.resolved.append((configuration.options.as_dict(), list(configuration.roots)))


def kept(options, names):
    return dict((name, as_journaled(options[name])) for name in names)


def connections(client, io_loop):
    """The connections the redis-server of `client` has accepted so far."""
    info = io_loop.run_sync(lambda: client.execute('INFO', 'stats')).decode('ascii')
    return int(info.split('total_connections_received:')[1].split()[0])


def test_a_redis_crawl_is_taken_back_alike_by_each_through_one_client(
        start_redis_server, io_loop, tmpdir, capsys, monkeypatch):
    redis = start_redis_server()
    common = ['--redis', redis.url(), '--crawl-id', 'alike', '--no-progress', '-q']
    assert main(common + ['--demo', '--demo-pages', '10', '--max-depth', '1', '--lenient',
                          '--frames'] + UNTHROTTLED_ARGS) == 0
    capsys.readouterr()
    spy = ResolveSpy(monkeypatch)
    counter = RedisClient(redis.url())  # connected by its first INFO, on one connection
    try:
        made = []
        for view in [[], ['--status'], ['--collect', str(tmpdir.join('all.jsonl'))]]:
            before = connections(counter, io_loop)
            assert main(common + view) == 0, view
            made.append(connections(counter, io_loop) - before)
    finally:
        counter.close()
    assert made == [1, 1, 1]  # one client a process: the crawl's, the view's
    (crawl, crawl_roots), (status, status_roots), (collect, collect_roots) = spy.resolved
    assert (crawl['max_depth'], crawl['strict'], crawl['frames']) == (1, False, True)
    assert crawl['max_rate'] == 0.0 and len(crawl_roots) == 1
    assert kept(status, SHARED_META_OPTIONS) == kept(crawl, SHARED_META_OPTIONS)
    assert kept(collect, SHARED_META_OPTIONS) == kept(crawl, SHARED_META_OPTIONS)
    assert status_roots == collect_roots == crawl_roots


def test_a_journal_is_taken_back_alike_by_the_command_line_and_the_api(
        io_loop, tmpdir, capsys, monkeypatch):
    state = str(tmpdir.join('state.db'))
    output = str(tmpdir.join('out.jsonl'))
    assert main(['--demo', '--demo-pages', '10', '--max-depth', '1', '--lenient',
                 '--state', state, '--output', output, '--no-progress', '-q'] +
                UNTHROTTLED_ARGS) == 0
    capsys.readouterr()
    spy = ResolveSpy(monkeypatch)
    assert main(['--state', state, '--resume', '--no-progress', '-q']) == 0
    [(resumed, resumed_roots)] = spy.resolved
    configuration = configure({'state': state, 'resume': True})
    configuration.close()
    crawler = Crawler(state=state, resume=True)
    crawler.store.close()
    names = JOURNALED_OPTIONS + ('demo', 'demo_pages', 'demo_port', 'output')
    assert (resumed['max_depth'], resumed['strict'], resumed['demo_pages']) == (1, False, 10)
    assert resumed['output'] == output  # written where the crawl wrote
    assert kept(configuration.options.as_dict(), names) == kept(resumed, names)
    assert kept(crawler.options.as_dict(), names) == kept(resumed, names)
    assert configuration.roots == crawler.roots == resumed_roots


@pytest.mark.gen_test
def test_a_crawler_owns_the_output_file_it_is_given_by_path(serve, tmpdir):
    server, origin = serve(Site(seed=1, pages=12))
    path = str(tmpdir.join('lines.jsonl'))
    crawler = Crawler([origin + '/'], output=path, **UNTHROTTLED)
    lines = crawler.outputs[0]
    assert (lines.owned, lines.stream.closed) == (True, False)
    statistics = yield crawler.crawl()
    assert lines.stream.closed
    with io.open(path, encoding='utf-8') as written:
        urls = [json.loads(line)['url'] for line in written]
    assert sorted(urls) == sorted(statistic.url for statistic in statistics.done)
    # A stream is its caller's: written to, left open.
    stream = io.StringIO()
    yield Crawler([origin + '/'], output=stream, **UNTHROTTLED).crawl()
    assert not stream.closed and len(stream.getvalue().splitlines()) == len(urls)


def test_a_crawler_refused_leaves_its_output_file_alone(io_loop, tmpdir):
    state, path = str(tmpdir.join('state.db')), tmpdir.join('lines.jsonl')
    journal = Journal(state)
    journal.queue([(ROOT, 0, 10)])  # it holds a crawl
    journal.close()
    path.write('kept\n')
    with pytest.raises(ValueError) as raised:
        Crawler([ROOT], state=state, output=str(path))
    assert 'holds a crawl already' in str(raised.value)
    assert path.read() == 'kept\n'
    with pytest.raises(ConfigurationError) as raised:
        Crawler([ROOT], output=str(tmpdir.join('no', 'such', 'dir.jsonl')))
    assert str(raised.value).startswith('output %s: ' % tmpdir.join('no', 'such', 'dir.jsonl'))
    assert raised.value.describe(COMMAND_LINE).startswith('--output ')


def test_a_collect_stopped_while_its_configuration_waits_for_redis(tmpdir):
    # SIGTERM while resolve waits for a Redis that is down: said as a collect of nothing.
    path = str(tmpdir.join('all.jsonl'))
    process = child(['-m', 'tinytornado.crawler', '--redis', NOWHERE, '--crawl-id', 'c',
                     '--collect', path], stderr=subprocess.PIPE)
    try:
        first = process.stderr.readline().decode('utf-8')
        assert 'unreachable' in first, first  # the client waits, saying so
        process.send_signal(signal.SIGTERM)
        rest = process.stderr.read().decode('utf-8')
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    assert process.returncode == 130
    assert rest == ('tinycrawl: --collect %s: interrupted after 0 lines appended; run it '
                    'again to go on\n' % path)
