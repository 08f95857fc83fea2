"""The command line's errors and exit statuses: a user's mistake is one line naming its
option and exit 2 before any request; exit 3, with the real cause, when no root got a
response; the table of statuses in --help; the report's counters of error pages; a
progress line that fits the terminal.

Crawls run in this process (`main`) against a server on the test's loop, or as a child
process for what only a process shows (its exit status, a terminal).
"""
from __future__ import absolute_import, division, print_function

import collections
import fcntl
import io
import json
import os
import re
import select
import shutil
import socket
import struct
import termios

import pytest

from tinytornado.crawler.application import cli
from tinytornado.crawler.application.collect import EXIT_NO_CRAWL, EXIT_NO_REDIS
from tinytornado.crawler.application.cli import (
    EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_NO_ROOT, EXIT_USAGE, main)
from tinytornado.crawler.demo.website import Site
from tinytornado.crawler.engine import Crawler
from tinytornado.crawler.frontier import Frontier
from tinytornado.crawler.application.progress import ProgressLine, fit_line, terminal_columns
from tinytornado.crawler.stats import CrawlStatistics, FetchStatistic, failure_cause
from tinytornado.crawler.application.usage import option_names

from crawler_sites import UNTHROTTLED_ARGS, Pages, links, robots_txt
from test_crawler_cli import child, start_crawl, wait_for, waits_for_processes


@pytest.fixture
def site(serve):
    """(server, root URL) of a small site the test's loop serves."""
    server, origin = serve(Pages({'/': links('/a'), '/a': links('/')}))
    return server, origin + '/'


def refused(argv, capsys):
    """The one line `main(argv)` refuses the command line with (exit status 2)."""
    with pytest.raises(SystemExit) as raised:
        main(argv)
    assert raised.value.code == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ''
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith('tinycrawl: error: ')
    return lines[0][len('tinycrawl: error: '):]


@pytest.mark.parametrize('options, message', [
    (['--delay', '-1'], '--delay must be at least 0 (got -1.0)'),
    (['--delay', 'nan'], '--delay must be a finite number (got nan)'),
    (['--max-tasks', '0'], '--max-tasks must be at least 1 (got 0)'),
    (['--max-tries', '0'], '--max-tries must be at least 1 (got 0)'),
    (['--max-pages', '0'], '--max-pages must be at least 1 (got 0)'),
    (['--max-depth', '-1'], '--max-depth must be at least 0 (got -1)'),
    (['--max-per-host', '0'], '--max-per-host must be at least 1 (got 0)'),
    (['--max-redirect', '-2'], '--max-redirect must be at least 0 (got -2)'),
    (['--connect-timeout', '0'], '--connect-timeout must be more than 0 (got 0.0)'),
    (['--request-timeout', '-5'], '--request-timeout must be more than 0 (got -5.0)'),
    (['--max-crawl-delay', 'inf'], '--max-crawl-delay must be a finite number (got inf)'),
    (['--max-body-size', '-1'], '--max-body-size must be at least 0 (got -1)'),
    (['--include', '('], "--include '(' is not a regular expression: "),
    (['--exclude', 'ok', '--exclude', '[a-'], "--exclude '[a-' is not a regular expression: "),
])
def test_a_bad_option_is_one_line_and_no_request(site, capsys, options, message):
    server, root = site
    assert refused([root, '--no-progress'] + options, capsys).startswith(message)
    assert server.requests == []


def test_a_bad_demo_option_starts_no_demo_server(io_loop, capsys, monkeypatch):
    started = []
    monkeypatch.setattr(cli, 'start_demo_server', lambda *args, **kwargs: started.append(1))
    assert refused(['--demo', '--demo-port', '70000'], capsys) == (
        '--demo-port must be at most 65535 (got 70000)')
    assert refused(['--demo-pages', '0'], capsys) == '--demo-pages must be at least 1 (got 0)'
    assert started == []


@pytest.mark.parametrize('option', ['--output', '--summary', '--report', '--warc', '--state'])
def test_a_file_option_that_cannot_be_written(site, tmpdir, capsys, option):
    server, root = site
    directory = str(tmpdir)
    assert refused([root, option, directory], capsys) == '%s %s: is a directory' % (
        option, directory)
    missing = os.path.join(directory, 'missing', 'file')
    assert refused([root, option, missing], capsys) == '%s %s: no such directory: %s' % (
        option, missing, os.path.dirname(missing))
    assert server.requests == []
    assert os.listdir(directory) == []


@pytest.mark.skipif(os.geteuid() == 0, reason='root may write anywhere')
def test_a_file_in_a_read_only_directory(site, tmpdir, capsys):
    server, root = site
    path = str(tmpdir.join('out.jsonl'))
    tmpdir.chmod(0o500)
    try:
        assert refused([root, '--output', path], capsys) == '--output %s: permission denied' % (
            path,)
    finally:
        tmpdir.chmod(0o700)
    assert server.requests == []


def test_a_refused_crawl_leaves_the_files_as_they_were(site, tmpdir, capsys):
    server, root = site
    summary, output = tmpdir.join('summary.json'), tmpdir.join('new.jsonl')
    summary.write('{"urls": 7}\n')
    assert refused([root, '--summary', str(summary), '--output', str(output),
                    '--include', '('], capsys).startswith('--include')
    assert summary.read() == '{"urls": 7}\n' and not output.exists()
    assert server.requests == []


def test_a_state_file_that_is_not_a_journal(site, tmpdir, capsys):
    server, root = site
    state = tmpdir.join('state.sqlite')
    state.write('not a database, but a note that must survive\n' * 100)
    message = refused([root, '--state', str(state)], capsys)
    assert message == '--state %s: cannot keep a crawl journal in it: file is not a database' % (
        state,)
    assert state.read() == 'not a database, but a note that must survive\n' * 100
    assert server.requests == []


@pytest.mark.parametrize('url', ['ftp://example.com/pub/file.txt', 'http://exa mple.com/a b'])
def test_a_bad_root_url_is_quoted_whole(io_loop, capsys, url):
    assert refused([url], capsys).startswith('the root URL %r cannot be crawled: ' % url)


def test_the_python_api_keeps_its_own_names(io_loop):
    with pytest.raises(ValueError) as raised:
        Crawler(['http://127.0.0.1:1/'], max_tasks=0)
    assert 'max_tasks' in str(raised.value) and '--' not in str(raised.value)


def test_option_names_in_a_message():
    dests = {'max_tasks': 10, 'max_tries': 4, 'state': None}
    assert option_names('max_tasks and max_tries must be at least 1; max_other too, state',
                        dests) == ('--max-tasks and --max-tries must be at least 1; '
                                   'max_other too, state')


def test_help_shows_the_exit_statuses(capsys):
    with pytest.raises(SystemExit) as raised:
        main(['--help'])
    assert raised.value.code == 0
    text = capsys.readouterr().out
    table = text[text.index('exit statuses:'):]
    codes = [int(code) for code in re.findall(r'^  (\d+) +\S', table, re.M)]
    assert codes == [0, 1, EXIT_USAGE, EXIT_NO_ROOT, EXIT_NO_REDIS, EXIT_NO_CRAWL,
                     EXIT_INTERRUPTED, EXIT_BROKEN_PIPE]


# -- no root could be fetched ---------------------------------------------------------------

@pytest.fixture
def refusing_port():
    """A port on 127.0.0.1 that refuses connections: bound, and not listening, for as long
    as the test runs (a port closed again could be taken by another process)."""
    bound = socket.socket()
    bound.bind(('127.0.0.1', 0))
    yield bound.getsockname()[1]
    bound.close()


@waits_for_processes
def test_no_root_answers_exit_3_with_the_cause(refusing_port):
    root = 'http://127.0.0.1:%d/' % refusing_port
    status, report, errors = yield wait_for(start_crawl(root, '--max-tries', '1'))
    assert status == EXIT_NO_ROOT
    assert report.startswith('Finished 1 urls in ')
    assert errors.splitlines()[0].startswith('tinycrawl: politeness: at most 1000 requests ')
    assert errors.splitlines()[1:] == [
        'tinycrawl: no root could be fetched:',
        '  %s: connection refused to 127.0.0.1:%d, reading its robots.txt; tries: 1' % (
            root, refusing_port)]


def test_each_root_gets_its_cause(serve, refusing_port, capsys):
    server, origin = serve(Pages({'/robots.txt': [{'status': 503}]}))
    roots = [origin + '/', 'http://127.0.0.1:%d/x' % refusing_port]
    assert main(roots + ['--max-tries', '1', '--no-progress']) == EXIT_NO_ROOT
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == 'tinycrawl: no root could be fetched:'
    assert set(lines[1:]) == set([  # in the order they failed
        '  %s/: its robots.txt answered HTTP 503, which forbids crawling the site for now;'
        ' tries: 1' % origin,
        '  %s: connection refused to 127.0.0.1:%d, reading its robots.txt; tries: 1' % (
            roots[1], refusing_port)])
    assert main([roots[1], '--no-robots', '--max-tries', '1', '--no-progress'] +
                UNTHROTTLED_ARGS) == EXIT_NO_ROOT
    assert capsys.readouterr().err.splitlines()[1] == (
        '  %s: connection refused to 127.0.0.1:%d; tries: 1' % (roots[1], refusing_port))


def test_a_root_robots_txt_disallows(serve, capsys):
    server, origin = serve(Pages({'/robots.txt': robots_txt('User-agent: *\nDisallow: /\n')}))
    assert main([origin + '/', '--no-progress'] + UNTHROTTLED_ARGS) == EXIT_NO_ROOT
    assert capsys.readouterr().err.splitlines()[1] == (
        '  %s/: robots.txt disallows it; tries: 1' % origin)


def test_a_root_that_answers_an_error_was_fetched_but_not_crawled(serve, capsys):
    server, origin = serve(Pages({}))
    assert main([origin + '/', '--no-progress'] + UNTHROTTLED_ARGS) == EXIT_NO_ROOT
    captured = capsys.readouterr()
    assert 'status_404' in captured.out
    assert captured.err == ('tinycrawl: no root could be crawled:\n'
                            '  %s/: answered 404 Not Found\n' % origin)


def test_failure_causes_in_words():
    def cause(exception, url='http://h.test:81/x'):
        return failure_cause(FetchStatistic(url, exception=exception))
    assert cause('gaierror: [Errno -2] Name or service not known') == (
        'cannot resolve h.test:81: Name or service not known')
    assert cause('ConnectionResetError: [Errno 104] Connection reset by peer') == (
        'h.test:81: connection reset by peer')
    assert cause('HTTPTimeoutError: Timeout while connecting') == (
        'HTTPTimeoutError: Timeout while connecting (h.test:81)')
    assert cause('RobotsUnavailable: robots.txt: HTTPTimeoutError: Timeout during request') == (
        'HTTPTimeoutError: Timeout during request (h.test:81), reading its robots.txt')


# -- the report -------------------------------------------------------------------------------

def test_error_pages_are_not_counted_as_html(serve, tmpdir, capsys):
    server, origin = serve(Pages({
        '/': links('/a', '/missing', '/boom', '/f.txt'),
        '/a': links('/'),
        '/boom': {'status': 500, 'body': '<html><body>boom</body></html>'},
        '/f.txt': {'content_type': 'text/plain', 'body': 'text'},
    }))
    summary = str(tmpdir.join('summary.json'))
    assert main([origin + '/', '--summary', summary, '--no-progress'] + UNTHROTTLED_ARGS) == 0
    report = capsys.readouterr().out
    with io.open(summary, encoding='utf-8') as summary_file:
        counters = json.load(summary_file)['counters']
    assert dict((key, counters[key]) for key in (
        'html', 'error_page', 'error_page_bytes', 'other', 'status_200', 'status_404',
        'status_500')) == {
        'html': 2, 'error_page': 2, 'error_page_bytes': len(b'not found') + 30, 'other': 1,
        'status_200': 3, 'status_404': 1, 'status_500': 1}
    assert re.search(r'^ +error_page +2$', report, re.M)
    assert re.search(r'^ +html +2$', report, re.M)


def test_a_summary_that_cannot_be_written_at_the_end(serve, tmpdir, capsys):
    server, origin = serve(Pages({'/': links('/a'), '/a': 'a'}))
    directory = tmpdir.join('gone')
    directory.mkdir()
    summary = str(directory.join('summary.json'))
    server.on_request = lambda path: directory.exists() and shutil.rmtree(str(directory))
    assert main([origin + '/', '--summary', summary, '--no-progress']
                 + UNTHROTTLED_ARGS) == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out.startswith('Finished 2 urls')
    assert captured.err.splitlines() == [
        'tinycrawl: error: --summary %s: No such file or directory' % summary]


# -- the progress line ------------------------------------------------------------------------

BIG_COUNTS = (1234567, 7654321, 10, 12345.6)


@pytest.mark.parametrize('columns', [1, 10, 40, 52, 200])
def test_the_progress_line_fits(columns):
    line = fit_line(BIG_COUNTS, columns)
    assert 0 < len(line) <= max(columns - 1, 1)
    assert line.startswith('1234567 done'[:len(line)])


def test_the_wordiest_line_that_fits():
    assert fit_line(BIG_COUNTS, 200) == (
        '1234567 done, 7654321 queued, 10 in flight, 12345.6 urls/s')
    assert fit_line(BIG_COUNTS, 52) == '1234567 done 7654321 queued 10 active 12345.6/s'
    assert fit_line(BIG_COUNTS, 40) == '1234567 done 7654321 queued 12345.6/s'


@pytest.fixture
def terminal(monkeypatch):
    """terminal(columns) -> (a stream writing to a pseudo-terminal that wide, read())."""
    monkeypatch.delenv('COLUMNS', raising=False)
    opened = []

    def open_terminal(columns):
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack('HHHH', 24, columns, 0, 0))
        stream = os.fdopen(slave, 'w')
        opened.append((master, stream))
        return stream, lambda: read_all(master)

    yield open_terminal
    for master, stream in opened:
        stream.close()
        os.close(master)


def read_all(master):
    """What the terminal got: a pseudo-terminal passes writes on asynchronously."""
    chunks = []
    while select.select([master], [], [], 0.5)[0]:
        chunks.append(os.read(master, 65536))
    return b''.join(chunks).decode('utf-8')


def fake_crawler(done, queued):
    statistics = CrawlStatistics()
    statistics.urls = done
    frontier = Frontier()
    for number in range(queued):
        frontier.put(collections.namedtuple('Item', 'url host')('a/%d' % number, 'a'))
    return collections.namedtuple('Crawler', 'statistics frontier')(statistics, frontier)


@pytest.mark.parametrize('columns', [40, 200])
def test_the_progress_line_on_a_terminal_that_wide(io_loop, terminal, columns):
    stream, read = terminal(columns)
    assert terminal_columns(stream) == columns
    progress = ProgressLine(fake_crawler(1234567, 3000), stream)
    progress.show()
    progress.stop()
    shown, erased = read().split('\r')[1:3]
    assert len(shown) < columns and erased == ' ' * len(shown)
    assert shown.startswith('1234567 done, 3000 queued, 0 in flight, ' if columns == 200 else
                            '1234567 done 3000 queued ')
    assert shown.endswith(' urls/s' if columns == 200 else '/s')


def test_columns_from_the_environment(terminal, monkeypatch):
    stream, _ = terminal(40)
    monkeypatch.setenv('COLUMNS', '100')
    assert terminal_columns(stream) == 100
    assert terminal_columns(io.StringIO()) == 100
    monkeypatch.delenv('COLUMNS')
    assert terminal_columns(io.StringIO(), fallback=66) == 66


@waits_for_processes
def test_a_crawl_on_a_narrow_terminal(serve, terminal):
    server, origin = serve(Site(seed=0, pages=40, slow_fraction=0.5, slow_delay=0.05))
    stream, read = terminal(40)
    process = child(['-m', 'tinytornado.crawler', origin + '/', '--max-tasks', '2']
                     + UNTHROTTLED_ARGS,
                    stderr=stream)
    status, _, _ = yield wait_for(process)
    assert status == 0
    politeness, _, progress = read().partition('\n')  # the politeness in force, first
    assert politeness.startswith('tinycrawl: politeness: ')
    pieces = progress.split('\r')
    assert any(re.match(r'\d+ done \d+ queued ', piece) for piece in pieces)
    assert max(len(piece) for piece in pieces) < 40
