"""Instructions per operation of the CPU-bound workloads, counted by valgrind's callgrind.

    python benchmarks/instructions.py [--only W1,W4] [--implementations tinytornado,asyncio]

Wall-clock ratios on a shared, noisy machine move by 10-50% between runs; instruction counts
do not (the same binary and inputs give the same count whatever else the machine does). Each
workload runs in a fresh interpreter under callgrind at two sizes, and the difference divided
by the difference in operations is the cost of one operation, without start-up and imports.
Instructions are not time (a cache miss or a syscall costs more than its count), so this
complements run.py's tables rather than replacing them. W3, W5 and W6 are left out: how many
timers fire per pass and how I/O interleaves depend on time, which valgrind slows 50-fold.
"""
from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import re
import subprocess
import sys
import warnings

import specs
from common import Unavailable
from measure import make_implementation

__all__ = ['main']

HERE = os.path.dirname(os.path.abspath(__file__))

# (small, large) sizes per workload; W2 keeps its 1,000 coroutines.
SIZES = {
    'W1-return': ({'calls': 2000}, {'calls': 12000}),
    'W1-moment': ({'calls': 2000}, {'calls': 12000}),
    'W2': ({'coroutines': 1000, 'switches': 2}, {'coroutines': 1000, 'switches': 12}),
    'W4': ({'callbacks': 5000}, {'callbacks': 30000}),
}
IMPLEMENTATIONS = ('tinytornado', 'asyncio', 'uvloop', 'tornado')
_COLLECTED = re.compile(r'Collected : (\d+)')


def run_child(key, name, params):
    """In the process under callgrind: run the workload once and check its result."""
    workload = [w for w in specs.WORKLOADS if w.key == key][0]
    warnings.simplefilter('ignore', DeprecationWarning)  # Tornado 6's IOLoop.current()
    try:
        implementation = make_implementation(name)
    except Unavailable:
        return 3
    result = getattr(implementation, workload.function)(**specs.make_inputs(workload, params))
    if result != workload.expected(params):
        raise SystemExit('%s on %s returned %r' % (key, name, result))
    return 0


def count_instructions(key, name, params):
    """Instructions the whole child process ran; None if the implementation is missing."""
    command = ['valgrind', '--tool=callgrind', '--callgrind-out-file=/dev/null',
               sys.executable, os.path.join(HERE, 'instructions.py'), '--child', key, name,
               json.dumps(params)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=dict(os.environ, PYTHONHASHSEED='0'))
    out, err = child.communicate()
    if child.returncode == 3:
        return None
    match = _COLLECTED.search(err.decode('utf-8', 'replace'))
    if child.returncode != 0 or match is None:
        raise SystemExit('%s on %s failed under callgrind:\n%s%s' % (
            key, name, out.decode('utf-8', 'replace'), err.decode('utf-8', 'replace')))
    return int(match.group(1))


def per_operation(workload, name):
    small, large = SIZES[workload.key]
    counts = [count_instructions(workload.key, name, params) for params in (small, large)]
    if None in counts:
        return None
    return (counts[1] - counts[0]) / (workload.ops(large) - workload.ops(small))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--only', help='comma-separated workload prefixes, e.g. W1,W4')
    parser.add_argument('--implementations', default=','.join(IMPLEMENTATIONS))
    parser.add_argument('--child', nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        key, name, params = args.child
        return run_child(key, name, json.loads(params))
    names = [n for n in args.implementations.split(',') if n]
    print('instructions per operation (callgrind), Python %s' % sys.version.split()[0])
    print('%-10s %s  %s' % ('workload', ''.join('%13s' % n for n in names),
                            ''.join('%15s' % ('vs ' + n) for n in names[1:])))
    for workload in specs.select(args.only):
        if workload.key not in SIZES:
            continue
        costs = [per_operation(workload, name) for name in names]
        cells = ''.join('%13s' % ('-' if c is None else '{:,.0f}'.format(c)) for c in costs)
        ratios = ''.join('%15s' % ('-' if c is None or not costs[0] else '%.2fx' % (c / costs[0]))
                         for c in costs[1:])
        print('%-10s %s  %s' % (workload.key, cells, ratios))
    return 0


if __name__ == '__main__':
    sys.exit(main())
