"""How late 10,000 fetches that time out together hear of it (issue 19, item 6).

    python benchmarks/timeouts.py [--fetches 10000] [--rounds 5] [--implementations ...]

Each fetch is wrapped in a timeout and sent to a server that never answers (a listening
socket nobody accepts from: the kernel's backlog completes the connections). At most 10
are in flight, the rest wait in the client's queue (but see `all in flight`). On
tinytornado: ``gen.with_timeout`` around ``AsyncHTTPClient(max_clients=10).fetch``. On
asyncio: ``asyncio.wait_for`` around a plain asyncio connection (open_connection, write
the request, read the head) under an ``asyncio.Semaphore(10)``, aiohttp being no
dependency of this benchmark.

A fetch's lateness is the time from its deadline to its caller resuming with the timeout
error; a run reports the median and the largest, the lateness of the last caller.
Scenarios: `same deadline` (the fetches leave the queue in the order they came),
`shuffled` (deadlines spread at random over 10 ms: they leave from anywhere in it),
`all in flight` (no queue: max_clients is the number of fetches, so each is connected, or
still connecting past the listener's backlog, when it times out; one deadline), and
`no fetch` (each caller waits on a Future that never resolves, ``asyncio.wait_for`` on a
bare asyncio Future; one deadline): what the timeout and the caller's resumption alone
cost, the floor under the other three. (``with_timeout`` leaves a bare Future uncancelled,
as Tornado 5.1's does; ``wait_for`` cancels it.)

The method is run.py's: every measurement in a fresh process (``--measure``), rounds
interleaving the implementations, medians over rounds; the ratio is peer / tinytornado of
the median largest lateness (above 1: tinytornado's callers hear sooner). To measure
another checkout's tinytornado, run with PYTHONPATH set to it.

After each tinytornado storm (and a pause for the cancelled fetches' coroutines to end),
the run counts the pool slots still held and the sockets still open that the storm
opened: both must be 0, else the run fails (issue 28: a fetch whose connection completed
in the pass its timeout fired held its slot and socket for ever). Where /proc/self/fd is
missing, sockets are not counted.
"""
from __future__ import absolute_import, division, print_function

import argparse
import functools
import os
import random
import sys

import machine
from common import (DEFAULT_PEERS, Unavailable, failures, import_optional, json_from_child,
                    loopback_listener, print_measurement)
from report import median

__all__ = ['deadline_offsets', 'main']

SCENARIOS = ['same deadline', 'shuffled', 'all in flight', 'no fetch']
QUEUED_IN_FLIGHT = 10  # the fetches in flight at once where the others queue
# From the start to the earliest deadline: every fetch is made by then (a child that was
# slower fails rather than measure a storm that began during the set-up). Fetches that
# connect at once are slower to make.
SET_UP_SECONDS = {'same deadline': 3.0, 'shuffled': 3.0, 'all in flight': 10.0,
                  'no fetch': 3.0}
SHUFFLE_SPREAD = 0.01
REQUEST = b'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
# After the callers have all resumed: time for the cancelled fetches to end and close.
SETTLE_SECONDS = 0.5
HELD = ('slots held', 'sockets held')
HERE = os.path.abspath(__file__)


def deadline_offsets(scenario, fetches):
    """Each fetch's deadline, in seconds after the start."""
    first = SET_UP_SECONDS[scenario]
    if scenario != 'shuffled':
        return [first] * fetches
    rng = random.Random(19)
    return [first + rng.uniform(0, SHUFFLE_SPREAD) for _ in range(fetches)]


def in_flight(scenario, fetches):
    """How many fetches may be in flight at once."""
    return fetches if scenario == 'all in flight' else QUEUED_IN_FLIGHT


def open_sockets():
    """How many sockets this process has open; None where /proc/self/fd is missing."""
    directory = '/proc/self/fd'
    if not os.path.isdir(directory):
        return None
    count = 0
    for name in os.listdir(directory):
        try:
            target = os.readlink(os.path.join(directory, name))
        except OSError:
            continue  # listdir's own descriptor, closed once it returned
        count += target.startswith('socket:')
    return count


def run_tinytornado(port, offsets, max_clients, check_set_up, fetching=True):
    """The latenesses of `offsets` fetches on tinytornado (or any Tornado-API package),
    and what the storm left held ({'slots held': n, 'sockets held': n or None});
    `check_set_up(seconds)` is told how long making them took. Not `fetching`, each waits
    on a Future that never resolves instead."""
    gen = import_optional('tinytornado.gen')
    future_class = import_optional('tinytornado.concurrent').Future
    httpclient = import_optional('tinytornado.httpclient')
    io_loop = import_optional('tinytornado.ioloop').IOLoop.current()
    sockets_before = open_sockets()
    client = httpclient.AsyncHTTPClient(max_clients=max_clients)
    url = 'http://127.0.0.1:%d/' % port
    latenesses = []

    @gen.coroutine
    def fetch(deadline):
        try:
            yield gen.with_timeout(deadline,
                                   client.fetch(url) if fetching else future_class())
        except gen.TimeoutError:
            latenesses.append(io_loop.time() - deadline)

    @gen.coroutine
    def fetch_all():
        start = io_loop.time()
        waits = [fetch(start + offset) for offset in offsets]
        check_set_up(io_loop.time() - start)
        yield waits

    io_loop.run_sync(fetch_all)
    io_loop.run_sync(lambda: gen.sleep(SETTLE_SECONDS))
    sockets_after = open_sockets()
    held = {'slots held': client._pool.active,
            'sockets held': None if sockets_before is None else sockets_after - sockets_before}
    client.close()
    return latenesses, held


def check_set_up(first_deadline, seconds):
    if seconds >= first_deadline:
        raise RuntimeError('making the fetches took %.2f s, past the first deadline: raise '
                           'SET_UP_SECONDS' % seconds)


def measure(implementation, scenario, fetches):
    """One run in this process: {'median': s, 'largest': s} of the latenesses."""
    listener = loopback_listener()
    port = listener.getsockname()[1]
    offsets = deadline_offsets(scenario, fetches)
    check = functools.partial(check_set_up, min(offsets))
    fetching = scenario != 'no fetch'
    held = {}
    if implementation == 'tinytornado':
        latenesses, held = run_tinytornado(port, offsets, in_flight(scenario, fetches), check,
                                           fetching)
    elif sys.version_info[0] < 3:
        raise Unavailable('Python 2 has no asyncio')
    else:
        from timeouts_asyncio_py3 import run_asyncio
        latenesses = run_asyncio(port, offsets, in_flight(scenario, fetches), REQUEST, check,
                                 fetching)
    listener.close()
    if len(latenesses) != fetches:
        raise AssertionError('%d of %d fetches timed out' % (len(latenesses), fetches))
    report = {'median': median(latenesses), 'largest': max(latenesses)}
    report.update(held)
    return report


def measure_in_child(implementation, scenario, fetches):
    command = [sys.executable, HERE, '--measure', implementation, scenario, str(fetches)]
    return json_from_child(command)


def measure_rounds(scenarios, implementations, fetches, rounds):
    """{(scenario, implementation): [report per round]}, implementations interleaved."""
    reports = {}
    for round_number in range(rounds):
        for scenario in scenarios:
            for implementation in implementations:
                report = measure_in_child(implementation, scenario, fetches)
                reports.setdefault((scenario, implementation), []).append(report)
                sys.stderr.write('  round %d %-14s %-12s %s\n' % (
                    round_number + 1, scenario, implementation,
                    '%.3f s' % report['largest'] if 'largest' in report else report))
    return reports


def _cell(reports, field):
    if any('largest' not in report for report in reports):
        return reports[0].get('unavailable', 'FAILED')
    values = [report[field] for report in reports]
    return '%.3f [%.3f-%.3f]' % (median(values), min(values), max(values))


def _ratio(reports, peer):
    tiny, other = reports['tinytornado'], reports.get(peer)
    if not other or any('largest' not in report for report in tiny + other):
        return '-'
    return '%.2fx' % (median([r['largest'] for r in other]) /
                      median([r['largest'] for r in tiny]))


def held_table(reports, scenarios):
    """What tinytornado's storms left held, per scenario: the largest over rounds (- where
    not counted)."""
    rows = [['after the storm (tinytornado)'] + scenarios, ['---'] * (len(scenarios) + 1)]
    for field in HELD:
        cells = []
        for scenario in scenarios:
            runs = reports.get((scenario, 'tinytornado'), [])
            values = [report.get(field) for report in runs]
            cells.append('-' if not values or None in values else str(max(values)))
        rows.append([field] + cells)
    return '\n'.join('| ' + ' | '.join(row) + ' |' for row in rows)


def held_failures(reports):
    """'FAILED' lines for the tinytornado storms that left a slot or a socket held."""
    return ['FAILED %s: %s after the storm' % (key, ', '.join(
        '%d %s' % (report[field], field) for field in HELD if report.get(field)))
            for key, runs in sorted(reports.items()) for report in runs
            if any(report.get(field) for field in HELD)]


def table(reports, scenarios, implementations, fetches, rounds):
    peers = [name for name in implementations if name != 'tinytornado']
    rows = [['scenario', 'lateness'] + implementations + ['vs ' + peer for peer in peers]]
    rows.append(['---'] * len(rows[0]))
    for scenario in scenarios:
        by_name = dict((name, reports[scenario, name]) for name in implementations)
        for field in ('median', 'largest'):
            rows.append([scenario, field] +
                        [_cell(by_name[name], field) for name in implementations] +
                        [_ratio(by_name, peer) if field == 'largest' else ''
                         for peer in peers])
    title = ('%d fetches timing out together (at most %d in flight but in `all in flight`): '
             'seconds from the deadline to the caller resuming, median [min-max] over %d '
             'rounds; ratio = peer / tinytornado of the largest'
             % (fetches, QUEUED_IN_FLIGHT, rounds))
    return '\n'.join([title, ''] + ['| ' + ' | '.join(row) + ' |' for row in rows])


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--fetches', type=int, default=10000)
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--implementations', default=DEFAULT_PEERS)
    parser.add_argument('--scenarios', default=','.join(SCENARIOS),
                        help='comma-separated subset of: %s' % ', '.join(SCENARIOS))
    parser.add_argument('--measure', nargs=3, metavar=('IMPLEMENTATION', 'SCENARIO', 'FETCHES'),
                        help='(internal) one measurement in this process, as JSON')
    args = parser.parse_args(argv)
    if args.measure:
        implementation, scenario, fetches = args.measure
        return print_measurement(lambda: measure(implementation, scenario, int(fetches)))
    implementations = args.implementations.split(',')
    scenarios = args.scenarios.split(',')
    unknown = sorted(set(scenarios) - set(SCENARIOS))
    if unknown:
        parser.error('unknown scenarios: %s' % ', '.join(unknown))
    print(machine.describe() + '\n')
    reports = measure_rounds(scenarios, implementations, args.fetches, args.rounds)
    print(table(reports, scenarios, implementations, args.fetches, args.rounds))
    print('\n' + held_table(reports, scenarios))
    failed = failures(reports) + held_failures(reports)
    for line in failed:
        print(line)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
