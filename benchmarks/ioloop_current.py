"""Instructions per `IOLoop.current()` call, counted by valgrind's callgrind (issue 28).

    python benchmarks/ioloop_current.py [--source DIR]

Two cases: a thread with a current loop (every coroutine's path), and inside a running
asyncio loop (as in ``asyncio.run()``) with none, where current() finds the asyncio loop's
IOLoop (Python 3 only).
Each runs in a fresh interpreter under callgrind at two sizes, with PYTHONHASHSEED=0; the
difference over the difference in calls is the cost of one call, the ``for`` loop's own
few instructions included. `--source` points at another checkout (a before/after).
"""
from __future__ import absolute_import, division, print_function

import argparse
import os
import re
import subprocess
import sys

SIZES = (20000, 120000)
_COLLECTED = re.compile(r'Collected : (\d+)')


def call_current(calls, inside_asyncio):
    from tinytornado.ioloop import IOLoop
    current = IOLoop.current
    if not inside_asyncio:
        current()  # Made current here: what the calls below find.
        for _ in range(calls):
            current()
        return
    import asyncio

    def in_a_callback():  # As in asyncio.run(main()), the asyncio loop is running.
        current()  # The first call builds the loop and imports the bridge.
        for _ in range(calls):
            current()
    asyncio_loop = asyncio.new_event_loop()
    asyncio_loop.call_soon(in_a_callback)
    asyncio_loop.call_soon(asyncio_loop.stop)
    asyncio_loop.run_forever()
    asyncio_loop.close()


def instructions(source, calls, inside_asyncio):
    env = dict(os.environ, PYTHONHASHSEED='0', PYTHONPATH=source)
    command = ['valgrind', '--tool=callgrind', '--callgrind-out-file=/dev/null',
               sys.executable, os.path.abspath(__file__), '--run', str(calls)]
    if inside_asyncio:
        command.append('--inside-asyncio')
    output = subprocess.check_output(command, env=env, stderr=subprocess.STDOUT)
    return int(_COLLECTED.search(output.decode()).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--source', default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help='the checkout whose tinytornado is measured')
    parser.add_argument('--run', type=int, help=argparse.SUPPRESS)
    parser.add_argument('--inside-asyncio', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run is not None:
        call_current(args.run, args.inside_asyncio)
        return
    cases = [('with a current loop', False)]
    if sys.version_info[0] >= 3:
        cases.append(('inside a running asyncio loop, none current', True))
    for name, inside_asyncio in cases:
        small, large = (instructions(args.source, calls, inside_asyncio) for calls in SIZES)
        print('%d.%d %s: %d instructions per call' % (
            sys.version_info[0], sys.version_info[1], name,
            (large - small) // (SIZES[1] - SIZES[0])))


if __name__ == '__main__':
    main()
