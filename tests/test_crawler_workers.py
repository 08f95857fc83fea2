"""``--workers N`` (crawler/workers.py): the workers' command lines, and the parent that
runs them, forwards SIGINT and SIGTERM and exits with the worst status, shown with fake
workers (small Python programs) so that only the process handling is under test.
"""
from __future__ import absolute_import, division, print_function

import os
import signal
import subprocess
import sys

import pytest

import tinytornado
from tinytornado.crawler.application.cli import build_parser
from tinytornado.crawler.application.workers import (
    exit_status, run_workers, worker_argv, worker_commands)

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(tinytornado.__file__)))


def test_each_worker_gets_the_command_line_and_files_of_its_own():
    argv = ['--redis', 'redis://h/0', '--crawl-id', 'c', 'http://a/', '--workers=3',
            '--output', 'out.jsonl', '--max-tasks', '5']
    files = dict(output='out.jsonl', summary=None, report=None, warc='w.warc.gz')
    assert worker_argv(argv, 2, files) == argv + [
        '--workers', '0', '--no-progress', '--output', 'out.jsonl.2',
        '--warc', 'w.warc.gz.2']
    # What a worker's argparse reads: its overrides win, whatever the user's spelling.
    args = build_parser().parse_args(worker_argv(argv, 2, files))
    assert (args.workers, args.output, args.warc, args.no_progress, args.roots,
            args.max_tasks) == (0, 'out.jsonl.2', 'w.warc.gz.2', True, ['http://a/'], 5)
    abbreviated = build_parser().parse_args(worker_argv(['--work', '4', '--', 'http://b/'],
                                                        1, {}))
    assert (abbreviated.workers, abbreviated.roots) == (0, ['http://b/'])
    assert worker_commands(['x'], 2, {}) == [
        [sys.executable, '-m', 'tinytornado.crawler', 'x', '--workers', '0', '--no-progress']
    ] * 2
    assert worker_commands(['x'], 1, {}, program=['w']) == [['w', 'x', '--workers', '0',
                                                             '--no-progress']]


def test_exit_status_counts_a_signal_as_a_shell_does():
    assert [exit_status(code) for code in (0, 3, 130, -9, -15)] == [0, 3, 130, 137, 143]


def fake_worker(code):
    return [sys.executable, '-c', code]


def test_the_worst_status_wins():
    assert run_workers([fake_worker('pass')] * 3) == 0
    assert run_workers([fake_worker('import sys; sys.exit(%d)' % n) for n in (0, 3, 1)]) == 3
    assert run_workers([fake_worker('import os; os.kill(os.getpid(), 9)'),
                        fake_worker('import sys; sys.exit(130)')]) == 137


# Says it is ready, then waits for a signal and tells which it got, and whether it leads
# a process group of its own (a terminal's Ctrl-C would reach it directly otherwise).
SIGNALLED_WORKER = """
import os, signal, sys
def stop(signum, frame):
    sys.stdout.write('%s got %d\\n' % (sys.argv[1], signum))
    sys.stdout.flush()
    os._exit(130)
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
sys.stdout.write('%s ready, own group %s\\n' % (sys.argv[1], os.getpgrp() == os.getpid()))
sys.stdout.flush()
while True:
    signal.pause()
"""

PARENT = """
import sys
from tinytornado.crawler.application.workers import run_workers
sys.exit(run_workers([[sys.executable, '-c', sys.argv[1], name] for name in 'ab']))
"""


@pytest.mark.parametrize('signum', [signal.SIGINT, signal.SIGTERM])
def test_signals_are_forwarded_to_every_worker(signum):
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT)
    parent = subprocess.Popen([sys.executable, '-c', PARENT, SIGNALLED_WORKER],
                              stdout=subprocess.PIPE, cwd=PACKAGE_ROOT, env=env)
    ready = sorted(parent.stdout.readline() for _ in range(2))
    assert ready == [b'a ready, own group True\n', b'b ready, own group True\n']
    parent.send_signal(signum)
    rest, _ = parent.communicate()
    assert sorted(rest.splitlines()) == [b'a got %d' % signum, b'b got %d' % signum]
    assert parent.returncode == 130
