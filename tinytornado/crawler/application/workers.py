"""``tinycrawl ... --workers N``: N worker processes of one command line on this machine,
so that one machine's crawl uses all its cores.

Each worker runs the same command line with ``--workers 0`` (crawl in this process) and
``--no-progress`` (N progress lines would garble one terminal) added, and each file
option that a process writes alone given a name of its own: ``--output FILE`` becomes
``FILE.1``, ``FILE.2``... for worker 1, 2... (likewise ``--summary``, ``--report`` and
``--warc``). The overrides are appended, not edited into the user's words, since argparse
takes the last of a repeated option whatever its spelling (``--workers=4``,
``--work 4``); they go before a ``--``, after which they would be read as URLs.

The workers run in process groups of their own, so that a Ctrl-C at the terminal reaches
them once, through this process, which forwards SIGINT and SIGTERM to each of them
(each worker then stops cleanly and prints its report; a second Ctrl-C is forwarded too,
and ends them at once). This process waits for them all and exits with the worst of their
statuses: the highest, a worker ended by signal S counting as 128 + S, as a shell counts it.

A process of a shared crawl given no URL joins it, and only joins: if the crawl has not
been started, it waits for another process to start it (`configuration.wait_for_crawl`),
since machines started together race, and a mistyped id must not start a crawl of its own.
"""
from __future__ import absolute_import, division, print_function

import os
import signal
import subprocess
import sys

__all__ = ['worker_argv', 'worker_commands', 'run_workers', 'exit_status',
           'PER_WORKER_FILES']

# The file options each worker writes alone, so each gets a name of its own.
PER_WORKER_FILES = ('output', 'summary', 'report', 'warc')
_FORWARDED = (signal.SIGINT, signal.SIGTERM)


def worker_argv(argv, index, files):
    """The arguments of worker `index` (from 1) of the command line `argv`, whose file
    options `files` ({option name: path}) are per worker."""
    overrides = ['--workers', '0', '--no-progress']
    for name in PER_WORKER_FILES:
        if files.get(name):
            overrides += ['--' + name, '%s.%d' % (files[name], index)]
    if '--' in argv:
        cut = argv.index('--')
        return argv[:cut] + overrides + argv[cut:]
    return list(argv) + overrides


def worker_commands(argv, count, files, program=None):
    """The commands of `count` workers of `argv`, run as ``python -m
    tinytornado.crawler`` by this interpreter unless `program` (a list) is given."""
    program = program or [sys.executable, '-m', 'tinytornado.crawler']
    return [program + worker_argv(argv, index, files) for index in range(1, count + 1)]


def exit_status(returncode):
    """A Popen returncode as a shell shows it: killed by signal S -> 128 + S."""
    return 128 - returncode if returncode < 0 else returncode


def run_workers(commands):
    """Run each command as a process, forwarding SIGINT and SIGTERM to them all, until
    all have exited; returns the worst (highest) of their `exit_status`es."""
    processes, signalled = [], []

    def forward(signum, frame):
        signalled.append(signum)
        for process in processes:
            if process.poll() is None:
                os.kill(process.pid, signum)

    previous = dict((signum, signal.signal(signum, forward)) for signum in _FORWARDED)
    try:
        for command in commands:
            if signalled:  # stopped while starting them: start no more
                break
            processes.append(subprocess.Popen(command, preexec_fn=os.setpgrp))
        statuses = [exit_status(process.wait()) for process in processes]
        return max(statuses) if statuses else 128 + signalled[0]
    finally:
        for process in processes:  # reached with live workers only by an exception here
            if process.poll() is None:
                os.kill(process.pid, signal.SIGTERM)
                process.wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
