"""``--workers N`` (crawler/workers.py): the workers' command lines, and the parent that
forks them (or, with other threads running, starts them as new processes), forwards
SIGINT and SIGTERM and exits with the worst status, shown with fake workers (small Python
functions and programs) so that only the process handling is under test.
"""
from __future__ import absolute_import, division, print_function

import os
import signal
import subprocess
import sys
import threading

import pytest

import tinytornado
from tinytornado.crawler.application.cli import build_parser
from tinytornado.crawler.application.workers import (
    exit_status, run_workers, worker_argv)

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


def test_exit_status_counts_a_signal_as_a_shell_does():
    assert [exit_status(code) for code in (0, 3, 130, -9, -15)] == [0, 3, 130, 137, 143]


# A fake worker's main: runs the code `argv[0]` with `argv` as sys.argv.
RUN_CODE = """
import sys
from tinytornado.crawler.application.workers import run_workers

def run_code(argv):
    sys.argv = list(argv)
    exec(argv[0], {})
"""


def in_a_subprocess(code, *argv):
    """Runs `code` in a new Python, `argv` its sys.argv[1:]: (returncode, stdout)."""
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT)
    process = subprocess.Popen([sys.executable, '-c', code] + list(argv),
                               stdout=subprocess.PIPE, cwd=PACKAGE_ROOT, env=env)
    return process.communicate()[0], process.returncode


WORST = RUN_CODE + """
assert run_workers([['pass']] * 3, run_code) == 0
assert run_workers([['import sys; sys.exit(%d)' % n] for n in (0, 3, 1)], run_code) == 3
assert run_workers([['import os; os.kill(os.getpid(), 9)'], ['import sys; sys.exit(130)']],
                   run_code) == 137
assert run_workers([['raise ValueError(7)'], ['pass']], run_code) == 1
assert run_workers([['import sys; sys.exit("said")']], run_code) == 1
assert run_workers([['raise KeyboardInterrupt'], ['pass']], run_code) == 130
print('done')
"""


def test_the_worst_status_wins():
    # In a process of its own, with no other thread: the workers are forked.
    assert in_a_subprocess(WORST) == (b'done\n', 0)


def test_with_other_threads_the_workers_are_new_processes():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:  # a fork would copy only this thread: a lock another held would stay held
        program = [sys.executable, '-c']
        assert run_workers([['import sys; sys.exit(%d)' % n] for n in (0, 3, 1)],
                           None, program=program) == 3
        assert run_workers([['import os; os.kill(os.getpid(), 9)'], ['pass']],
                           None, program=program) == 137
    finally:
        stop.set()
        thread.join()


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

PARENT = RUN_CODE + """
sys.stdout.write('unflushed launcher output\\n')  # written once, not by each worker too
sys.exit(run_workers([[sys.argv[1], name] for name in 'ab'], run_code))
"""


@pytest.mark.parametrize('signum', [signal.SIGINT, signal.SIGTERM])
def test_signals_are_forwarded_to_every_worker(signum):
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT)
    parent = subprocess.Popen([sys.executable, '-c', PARENT, SIGNALLED_WORKER],
                              stdout=subprocess.PIPE, cwd=PACKAGE_ROOT, env=env)
    assert parent.stdout.readline() == b'unflushed launcher output\n'
    ready = sorted(parent.stdout.readline() for _ in range(2))
    assert ready == [b'a ready, own group True\n', b'b ready, own group True\n']
    parent.send_signal(signum)
    rest, _ = parent.communicate()
    assert sorted(rest.splitlines()) == [b'a got %d' % signum, b'b got %d' % signum]
    assert parent.returncode == 130


# Each worker says its pid and its process's command line (hex): a new interpreter's
# would name the program it runs; a forked worker's is the launcher's.
SAME_INTERPRETER = """
import binascii, os, sys
from tinytornado.crawler.application.workers import run_workers

def cmdline():
    with open('/proc/%d/cmdline' % os.getpid(), 'rb') as f:
        return binascii.hexlify(f.read()).decode('ascii')

def report(argv):
    sys.stdout.write('%s %d %s\\n' % (argv[0], os.getpid(), cmdline()))

sys.stdout.write('launcher %d %s\\n' % (os.getpid(), cmdline()))
sys.exit(run_workers([['a'], ['b']], report))
"""


@pytest.mark.skipif(not os.path.exists('/proc/self/cmdline'), reason='needs /proc')
def test_workers_are_forked_not_new_interpreters():
    out, returncode = in_a_subprocess(SAME_INTERPRETER)
    assert returncode == 0
    lines = [line.split() for line in out.splitlines()]
    launcher, workers = lines[0], sorted(lines[1:])
    assert [worker[0] for worker in workers] == [b'a', b'b']
    for _, pid, cmdline in workers:
        assert pid != launcher[1]  # a process of its own, of the same command line
        assert cmdline == launcher[2]
