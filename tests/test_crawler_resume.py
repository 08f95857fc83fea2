"""``tinycrawl --state F --resume`` after a SIGKILL: the options taken back from the journal or
refused, a demo crawl's demo server started again on its port, the tries of a failing URL
and its host's failures carried over.

As in test_crawler_cli.py, crawls that are killed run in other processes; those that must
end at a chosen instant kill themselves right after a given call of their journal.
"""
from __future__ import absolute_import, division, print_function

import io
import json
import signal
import socket
import sqlite3

import pytest

from tinytornado.crawler.application.cli import main
from tinytornado.crawler.demo.website import Site
from tinytornado.crawler.journal import Journal

from crawler_sites import UNTHROTTLED_ARGS, Pages, links
from test_crawler_cli import child, start_crawl, wait_for, waits_for_processes

# A crawl that SIGKILLs itself right after the Nth call of a Journal method (argv[1], [2]).
# Its hosts back off 0.05 s after a first failure, not 1 s: an option no command-line flag
# sets, which its journal keeps for the resume.
DIE_AFTER_CALLS = """
import os, signal, sys
from tinytornado.crawler.application.cli import main
from tinytornado.crawler.engine import DEFAULT_OPTIONS
from tinytornado.crawler.journal import Journal
method, count, calls = sys.argv[1], int(sys.argv[2]), []
DEFAULT_OPTIONS['backoff'] = 0.05
record = getattr(Journal, method)
def record_then_die(journal, *args):
    record(journal, *args)
    calls.append(args)
    if len(calls) == count:
        os.kill(os.getpid(), signal.SIGKILL)
setattr(Journal, method, record_then_die)
sys.exit(main(sys.argv[3:]))
"""


def die_after(method, count, *args):
    return child(['-c', DIE_AFTER_CALLS, method, str(count)] + list(args) + UNTHROTTLED_ARGS)


def read_lines(path):
    with io.open(path, encoding='utf-8') as lines:
        return [json.loads(line) for line in lines]


def journal_meta(state, key):
    journal = Journal(state)
    try:
        return journal.get_meta(key)
    finally:
        journal.close()


@waits_for_processes
def test_a_killed_demo_crawl_resumes_on_its_own_demo_server(io_loop, tmpdir):
    state, output = str(tmpdir.join('state.sqlite')), str(tmpdir.join('out.jsonl'))
    status, _, errors = yield wait_for(die_after(
        'finish', 10, '--demo-pages', '60', '--demo-seed', '3', '--state', state,
        '--output', output, '--max-tasks', '4'))
    assert status == -signal.SIGKILL, errors
    [root] = journal_meta(state, 'roots')
    assert journal_meta(state, 'demo')['demo_port'] == int(root.split(':')[2].rstrip('/'))
    status, report, errors = yield wait_for(start_crawl(
        '--state', state, '--resume', '--output', output, '--max-tasks', '2'))
    assert status == 0, errors
    assert 'Resumed: 10 urls' in report and ' fail ' not in report
    fetched = dict((line['url'], line['status']) for line in read_lines(output)
                   if line['status'] is not None)
    assert fetched == Site(seed=3, pages=60).expected_crawl(root)


@waits_for_processes
def test_a_failing_url_gets_only_the_tries_it_has_left(serve, tmpdir):
    server, origin = serve(Pages({'/': links('/busy'), '/busy': {'status': 503}}))
    state, output = str(tmpdir.join('state.sqlite')), str(tmpdir.join('out.jsonl'))
    status, _, errors = yield wait_for(die_after(
        'failed', 2, origin + '/', '--state', state, '--output', output, '--max-tries', '4',
        '--no-robots'))
    assert status == -signal.SIGKILL, errors
    assert server.requests == ['/', '/busy', '/busy']
    connection = sqlite3.connect(state)
    try:
        # One URL's 503s back off that URL, not its host (politeness.HostHealth).
        assert connection.execute('SELECT failures FROM hosts').fetchall() == [(0,)]
    finally:
        connection.close()
    del server.requests[:]
    status, report, errors = yield wait_for(start_crawl('--state', state, '--resume',
                                                        '--output', output))
    assert status == 0, errors
    assert server.requests == ['/busy', '/busy']
    [busy] = [line for line in read_lines(output) if line['url'] == origin + '/busy']
    assert (busy['status'], busy['tries']) == (503, 4)


@pytest.fixture
def demo_crawl(io_loop, tmpdir, capsys):
    """The --state of a demo crawl run to its end with --max-depth 2 --lenient."""
    state = str(tmpdir.join('state.sqlite'))
    assert main(['--demo-pages', '20', '--max-depth', '2', '--lenient', '--no-progress',
                 '--state', state]) == 0
    capsys.readouterr()
    return state


def resume_error(state, capsys, *args):
    with pytest.raises(SystemExit) as raised:
        main(['--state', state, '--resume', '--no-progress'] + list(args))
    assert raised.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


def test_resume_refuses_options_that_contradict_the_journal(demo_crawl, capsys):
    assert resume_error(demo_crawl, capsys, '--max-depth', '3', '--strict', '--frames') == (
        "tinycrawl: error: --resume: --frames contradicts the journal's crawl without "
        "--frames; --max-depth 3 contradicts the journal's --max-depth 2; --strict "
        "contradicts the journal's --lenient")
    assert resume_error(demo_crawl, capsys, '--demo-pages', '30', '--include', 'a') == (
        "tinycrawl: error: --resume: --demo-pages 30 contradicts the journal's "
        "--demo-pages 20; --include a contradicts the journal's crawl without --include")
    port = journal_meta(demo_crawl, 'demo')['demo_port']
    assert resume_error(demo_crawl, capsys, 'http://127.0.0.1:1/') == (
        "tinycrawl: error: --resume: URL http://127.0.0.1:1/ contradicts the journal's "
        "URL http://127.0.0.1:%d/" % port)


def test_resume_takes_options_repeated_or_free(demo_crawl, capsys, tmpdir):
    summary = str(tmpdir.join('summary.json'))
    assert main(['--state', demo_crawl, '--resume', '--max-depth', '2', '--lenient',
                 '--max-tasks', '3', '--request-timeout', '5', '-v', '--no-progress',
                 '--summary', summary]) == 0
    report = capsys.readouterr().out
    assert 'Resumed: ' in report
    with io.open(summary, encoding='utf-8') as totals:
        assert json.load(totals)['max_tasks'] == 3


def test_resume_says_so_when_its_demo_port_is_taken(demo_crawl, capsys):
    port = journal_meta(demo_crawl, 'demo')['demo_port']
    taken = socket.socket()
    try:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(('127.0.0.1', port))
        taken.listen(1)
        error = resume_error(demo_crawl, capsys)
    finally:
        taken.close()
    assert error.startswith('tinycrawl: error: --resume: the demo server cannot listen on '
                            '127.0.0.1:%d (' % port)
