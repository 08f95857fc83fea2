"""``tinycrawl ... --workers N``: N worker processes of one command line on this machine,
so that one machine's crawl uses all its cores.

Each worker runs the same command line with ``--workers 0`` (crawl in this process) and
``--no-progress`` (N progress lines would garble one terminal) added, and each file
option that a process writes alone given a name of its own: ``--output FILE`` becomes
``FILE.1``, ``FILE.2``... for worker 1, 2... (likewise ``--summary``, ``--report`` and
``--warc``). The overrides are appended, not edited into the user's words, since argparse
takes the last of a repeated option whatever its spelling (``--workers=4``,
``--work 4``); they go before a ``--``, after which they would be read as URLs.

The workers are forked from this process (os.fork), which has already imported the
crawler and checked the options: a new interpreter would import it all again, a cost
each worker would pay on top of its crawl (with ``--workers 1``, the import twice). A
forked worker starts with no current IOLoop (it makes its own: this process's loop, and
the Redis connection the options' check opened, were closed before forking) and the
default SIGINT and SIGTERM handling, runs the crawler's main on its command line and
leaves by os._exit, never returning into this process's code. Where os.fork is missing,
or this process runs other threads (a fork copies only the thread that forks, so a lock
one of them held would stay held for good), each worker is a new interpreter running
``python -m tinytornado.crawler`` with its command line.

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

import atexit
import errno
import os
import signal
import subprocess
import sys
import threading
import traceback

from tinytornado.ioloop import IOLoop

__all__ = ['worker_argv', 'run_workers', 'exit_status', 'PER_WORKER_FILES']

# The file options each worker writes alone, so each gets a name of its own.
PER_WORKER_FILES = ('output', 'summary', 'report', 'warc')
_FORWARDED = (signal.SIGINT, signal.SIGTERM)
# What a new interpreter starts with, which a forked worker is given back.
_FRESH_HANDLERS = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
_PROGRAM = [sys.executable, '-m', 'tinytornado.crawler']


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


def exit_status(returncode):
    """A Popen returncode as a shell shows it: killed by signal S -> 128 + S."""
    return 128 - returncode if returncode < 0 else returncode


def run_workers(argvs, main, program=_PROGRAM):
    """Run `main(argv)` for each of `argvs` in a worker process of its own, forked from
    this one (or, where it cannot fork, see the module's text, running `program` + argv),
    forwarding SIGINT and SIGTERM to them all, until all have exited; returns the worst
    (highest) of their `exit_status`es."""
    forking = hasattr(os, 'fork') and threading.active_count() == 1
    launcher = os.getpid()
    processes, signalled, early = [], [], []

    def forward(signum, frame):
        if os.getpid() != launcher:  # a forked worker, signalled before it reset handlers
            early.append(signum)
            return
        signalled.append(signum)
        for process in processes:
            if process.returncode is None:  # not yet waited for: its pid is still its own
                _kill(process.pid, signum)

    previous = dict((signum, signal.signal(signum, forward)) for signum in _FORWARDED)
    try:
        for argv in argvs:
            if signalled:  # stopped while starting them: start no more
                break
            processes.append(_ForkedWorker(main, argv, early) if forking else subprocess.Popen(
                list(program) + list(argv), preexec_fn=os.setpgrp))
        statuses = [exit_status(process.wait()) for process in processes]
        return max(statuses) if statuses else 128 + signalled[0]
    finally:
        for process in processes:  # reached with live workers only by an exception here
            if process.returncode is None:
                _kill(process.pid, signal.SIGTERM)
                process.wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class _ForkedWorker(object):
    """A worker forked to run `main(argv)`, waited for as a Popen is (its `returncode`:
    None until waited for, -S if ended by signal S).

    `early` gets, in the worker, the signals this process's handlers got in it before it
    set its own: they are sent again once it has.
    """

    def __init__(self, main, argv, early):
        self.returncode = None
        for stream in (sys.stdout, sys.stderr):
            stream.flush()  # or the worker would write this process's buffered output too
        self.pid = os.fork()
        if not self.pid:
            status = 1
            try:
                status = _run_in_worker(main, argv, early)
            finally:
                _leave(status)

    def wait(self):
        while self.returncode is None:
            try:
                _, status = os.waitpid(self.pid, 0)
            except OSError as e:
                if e.errno != errno.EINTR:  # Python 2 does not retry (PEP 475)
                    raise
                continue
            self.returncode = (-os.WTERMSIG(status) if os.WIFSIGNALED(status)
                               else os.WEXITSTATUS(status))
        return self.returncode


def _run_in_worker(main, argv, early):
    """In a forked worker: `main(argv)` in a process as a new one starts; its status or
    SystemExit's code (1 after an unexpected exception, printed; 130 after Ctrl-C's)."""
    try:
        os.setpgrp()
        for signum, handler in _FRESH_HANDLERS.items():
            signal.signal(signum, handler)
        for signum in early:
            os.kill(os.getpid(), signum)
        IOLoop.clear_current()  # the worker makes a loop of its own
        return main(argv)
    except SystemExit as e:
        return e.code
    except BaseException as e:
        traceback.print_exc()
        # Python 3.8+ ends by SIGINT on an uncaught Ctrl-C: 130, as a shell counts it
        return 128 + signal.SIGINT if isinstance(e, KeyboardInterrupt) else 1


def _leave(status):
    """End a forked worker as an interpreter ends with `status` (SystemExit's code):
    atexit handlers run, output flushed, and this process's code never returned to."""
    if status is None:
        status = 0
    elif not isinstance(status, int):
        sys.stderr.write('%s\n' % (status,))
        status = 1
    try:
        atexit._run_exitfuncs()  # prints the exceptions of the handlers itself
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (IOError, OSError, ValueError):  # as Python's own exit, which says 120
                status = status or 120
    finally:
        os._exit(status & 0xff)


def _kill(pid, signum):
    try:
        os.kill(pid, signum)
    except OSError as e:
        if e.errno != errno.ESRCH:  # exited, not yet waited for
            raise
