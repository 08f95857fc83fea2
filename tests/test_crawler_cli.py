"""The command line (in this process, and as ``python -m tinytornado.crawler``), Ctrl-C, a crawl
killed with SIGKILL and resumed from its journal (its output mended: one line per URL), the
progress line on a terminal, and the examples.

Subprocess crawls fetch from a demo server on the test's own loop, so the test sees every
request the crawl makes and can interrupt or kill it at a chosen point.
"""
from __future__ import absolute_import, division, print_function

import errno
import io
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys

import pytest

import tinytornado
from tinytornado import gen
from tinytornado.crawler.application.cli import EXIT_INTERRUPTED, main
from tinytornado.crawler.demo.website import Site

from crawler_sites import UNTHROTTLED_ARGS


EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        'examples')


def read_json_lines(path):
    with io.open(path, encoding='utf-8') as lines:
        return [json.loads(line) for line in lines]


# The directory the tests' tinytornado comes from: the children's working directory and
# first on their path, so that they run the same code as the tests, whichever checkout the
# tests were started from (``python -m`` puts the working directory before PYTHONPATH).
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(tinytornado.__file__)))

# The time limit of a test that waits for crawls in other processes: wait_for's for each,
# not gen_test's 5 seconds, which Python's start-up alone can take on a loaded machine.
waits_for_processes = pytest.mark.gen_test(timeout=60)

# A crawl that SIGKILLs itself right after the journal's commit of its Nth finished URL,
# before it writes that URL's line: the one instant that can leave the output short.
DIE_AFTER_JOURNALING = """
import os, signal, sys
from tinytornado.crawler.application.cli import main
from tinytornado.crawler.journal import Journal
finish, finished = Journal.finish, []
def finish_then_die(journal, statistic, new_entries):
    finish(journal, statistic, new_entries)
    finished.append(statistic.url)
    if len(finished) == int(sys.argv[1]):
        os.kill(os.getpid(), signal.SIGKILL)
Journal.finish = finish_then_die
sys.exit(main(sys.argv[2:]))
"""


def child(argv, **kwargs):
    """A new Python process running `argv`, with the tests' tinytornado first on its path."""
    path = os.environ.get('PYTHONPATH')
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT + (os.pathsep + path if path else ''))
    kwargs.setdefault('stdout', subprocess.PIPE)
    kwargs.setdefault('stderr', subprocess.PIPE)
    return subprocess.Popen([sys.executable] + argv, cwd=PACKAGE_ROOT, env=env, **kwargs)


def start_crawl(*args):
    """``python -m tinytornado.crawler args...`` in a new process."""
    return child(['-m', 'tinytornado.crawler'] + list(args) + UNTHROTTLED_ARGS)


@gen.coroutine
def wait_for(process, timeout=20):
    """Wait, without blocking the loop (it serves the crawl), for `process` to exit."""
    waited = 0.0
    while process.poll() is None:
        if waited > timeout:
            process.kill()
            raise AssertionError('the crawl did not end')
        yield gen.sleep(0.02)
        waited += 0.02
    outputs = process.communicate()
    raise gen.Return((process.returncode,) + tuple(
        (output or b'').decode('utf-8') for output in outputs))


def test_demo_crawl_with_output_and_summary(io_loop, tmpdir, capsys):
    output, summary = str(tmpdir.join('out.jsonl')), str(tmpdir.join('summary.json'))
    status = main(['--demo', '--demo-pages', '30', '--output', output, '--summary', summary,
                   '--no-progress'] + UNTHROTTLED_ARGS)
    report = capsys.readouterr().out
    assert status == 0
    lines = read_json_lines(output)
    # The demo line opens the report (test_crawler_cli_mistakes checks it), then the numbers.
    assert report.splitlines()[1].startswith('Finished %d urls in ' % len(lines))
    with io.open(summary, encoding='utf-8') as summary_file:
        totals = json.load(summary_file)
    assert totals['urls'] == len(lines) and totals['todo'] == 0
    statuses = [line['status'] for line in lines if line['status'] is not None]
    assert totals['counters']['status_200'] == statuses.count(200)
    assert '%*s %10d' % (len('status_200') + 4, 'status_200', statuses.count(200)) in report


def test_command_line_errors(io_loop, capsys):
    for argv in (['--resume'], ['ftp://example.com/']):
        with pytest.raises(SystemExit) as raised:
            main(argv)
        assert raised.value.code == 2
    assert 'not an http' in capsys.readouterr().err


def test_no_url_crawls_the_demo_site(io_loop, capsys):
    assert main(['--demo-pages', '10', '--max-pages', '4']) == 0
    assert 'Finished 4 urls' in capsys.readouterr().out


def test_verbose_prints_a_line_per_url(io_loop, capsys):
    assert main(['--demo', '--demo-pages', '10', '-v', '--max-pages', '5'] +
                UNTHROTTLED_ARGS) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0].startswith('http://127.0.0.1:') for line in lines[:5]] == [True] * 5
    assert lines[5].startswith('Crawled the demo site: ')  # the report opens with it
    assert lines[6].startswith('Finished 5 urls')


@waits_for_processes
def test_ctrl_c_stops_the_crawl_with_a_report(serve):
    site = Site(seed=0, pages=60, slow_fraction=0.5, slow_delay=0.05)
    server, origin = serve(site)
    process = start_crawl(origin + '/', '--max-tasks', '2')
    server.on_request = lambda path: (len(server.requests) == 10 and
                                      process.send_signal(signal.SIGINT))
    status, report, errors = yield wait_for(process)
    assert status == EXIT_INTERRUPTED, errors
    assert report.startswith('Interrupted after ')
    done = int(report.split('Done: ')[1].split()[0])
    todo = int(report.split('Todo: ')[1].split()[0])
    assert done < 15 and todo > 0


def journal_done_urls(path):
    connection = sqlite3.connect(path)
    try:
        return set(url for (url,) in connection.execute(
            'SELECT url FROM urls WHERE statistic IS NOT NULL'))
    finally:
        connection.close()


def assert_one_line_per_finished_url(output, state, expected_crawl):
    """The output has a line for each URL the journal has finished, once, and the crawl
    fetched what it should have."""
    lines = read_json_lines(output)
    assert sorted(line['url'] for line in lines) == sorted(journal_done_urls(state))
    fetched = dict((line['url'], line['status']) for line in lines
                   if line['status'] is not None)
    assert fetched == expected_crawl


@waits_for_processes
def test_a_killed_crawl_resumes_from_its_journal(serve, tmpdir):
    site = Site(seed=6, pages=60, slow_fraction=0.3, slow_delay=0.02)
    server, origin = serve(site)
    state, output = str(tmpdir.join('state.sqlite')), str(tmpdir.join('out.jsonl'))
    args = [origin + '/', '--state', state, '--output', output, '--max-tasks', '4']
    killed = start_crawl(*args)
    server.on_request = lambda path: (len(server.requests) == 30 and
                                      os.kill(killed.pid, signal.SIGKILL))
    status, _, _ = yield wait_for(killed)
    assert status == -signal.SIGKILL
    first_requests = list(server.requests)
    done_first = set(url[len(origin):] for url in journal_done_urls(state))
    assert 0 < len(done_first) < 30
    server.on_request = None
    del server.requests[:]
    status, report, errors = yield wait_for(start_crawl('--state', state, '--resume',
                                                        '--output', output))
    assert status == 0, errors
    assert 'Resumed: %d urls' % len(done_first) in report
    assert_one_line_per_finished_url(output, state, site.expected_crawl(origin + '/'))
    # None fetched twice but those in flight at the kill (at most one per worker).
    again = (set(first_requests) & set(server.requests)) - set(['/robots.txt'])
    assert not again & done_first
    assert len(again) <= 4


@waits_for_processes
def test_a_crawl_killed_between_journal_and_output_loses_no_line(serve, tmpdir):
    site = Site(seed=6, pages=60)
    server, origin = serve(site)
    state, output = str(tmpdir.join('state.sqlite')), str(tmpdir.join('out.jsonl'))
    status, _, errors = yield wait_for(child(['-c', DIE_AFTER_JOURNALING, '10', origin + '/',
                                              '--state', state, '--output', output] +
                                             UNTHROTTLED_ARGS))
    assert status == -signal.SIGKILL, errors
    assert len(journal_done_urls(state)) == 10 and len(read_json_lines(output)) == 9
    status, report, errors = yield wait_for(start_crawl('--state', state, '--resume',
                                                        '--output', output))
    assert status == 0, errors
    assert 'Resumed: 10 urls' in report
    assert_one_line_per_finished_url(output, state, site.expected_crawl(origin + '/'))


@pytest.fixture
def finished_crawl(io_loop, tmpdir, capsys):
    """(state, output, the output's lines) of a demo crawl run to its end."""
    state, output = str(tmpdir.join('state.sqlite')), str(tmpdir.join('out.jsonl'))
    assert main(['--demo', '--demo-pages', '20', '--no-progress', '--state', state,
                 '--output', output] + UNTHROTTLED_ARGS) == 0
    capsys.readouterr()
    with io.open(output, 'rb') as lines:
        return state, output, lines.readlines()


def test_a_resumed_crawl_mends_its_output(finished_crawl, capsys):
    state, output, lines = finished_crawl
    assert len(lines) > 10
    # A line lost in the middle, and the last one torn in two.
    with io.open(output, 'wb') as damaged:
        damaged.write(b''.join(lines[:3] + lines[4:-1]) + lines[-1][:len(lines[-1]) // 2])
    assert main(['--state', state, '--resume', '--output', output, '--no-progress'] +
                UNTHROTTLED_ARGS) == 0
    assert 'Finished %d urls' % len(lines) in capsys.readouterr().out
    with io.open(output, 'rb') as mended:
        assert sorted(mended.readlines()) == sorted(lines)


def test_a_crawl_refused_leaves_the_output_alone(finished_crawl, capsys):
    state, output, lines = finished_crawl
    with pytest.raises(SystemExit) as raised:
        main(['http://127.0.0.1:1/', '--state', state, '--output', output])
    assert raised.value.code == 2
    assert 'holds a crawl already' in capsys.readouterr().err
    with io.open(output, 'rb') as unchanged:
        assert unchanged.readlines() == lines


def test_a_refused_demo_crawl_closes_its_demo_server(finished_crawl, capsys):
    state, output, _ = finished_crawl
    probe = socket.socket()
    probe.bind(('127.0.0.1', 0))
    port = probe.getsockname()[1]
    probe.close()
    with pytest.raises(SystemExit):
        main(['--demo', '--demo-port', str(port), '--state', state, '--output', output])
    assert 'holds a crawl already' in capsys.readouterr().err
    client = socket.socket()
    try:
        with pytest.raises(socket.error) as refused:
            client.connect(('127.0.0.1', port))
        assert refused.value.errno == errno.ECONNREFUSED
    finally:
        client.close()


@pytest.mark.skipif(not hasattr(os, 'openpty'), reason='needs a pseudo-terminal')
@waits_for_processes
def test_progress_line_on_a_terminal(serve):
    server, origin = serve(Site(seed=0, pages=40, slow_fraction=0.5, slow_delay=0.05))
    master, slave = os.openpty()
    try:
        process = child(['-m', 'tinytornado.crawler', origin + '/', '--max-tasks', '2'] +
                        UNTHROTTLED_ARGS, stderr=slave)
        status, _, _ = yield wait_for(process)
        os.close(slave)
        slave = None
        terminal = os.read(master, 65536).decode('utf-8')
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)
    assert status == 0
    assert ' done, ' in terminal and ' queued, ' in terminal and 'urls/s' in terminal


@waits_for_processes
def test_no_progress_line_when_not_a_terminal(serve):
    server, origin = serve(Site(seed=0, pages=10))
    status, report, errors = yield wait_for(start_crawl(origin + '/'))
    # Only the politeness in force, the first line of every crawl.
    assert status == 0 and errors.startswith('tinycrawl: politeness: ')
    assert len(errors.splitlines()) == 1
    assert report.startswith('Finished ')


def run_example(name):
    stdout, stderr = child([os.path.join(EXAMPLES, name)]).communicate()
    assert not stderr, stderr
    return stdout


def test_the_two_fetch_examples_agree():
    with_callbacks = run_example('fetch_callbacks.py')
    assert with_callbacks.decode('ascii').startswith('HTTP/1.1 200 OK - ')
    assert with_callbacks == run_example('fetch_coroutine.py')


def test_crawl_example():
    lines = run_example('crawl.py').decode('utf-8').splitlines()
    assert lines[10] == '...' and lines[11].startswith('Finished ')
    assert 'Done: %s' % lines[11].split()[1] in lines
