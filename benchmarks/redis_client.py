"""Commands per second of the Redis client (tinytornado.crawler.redisclient) against a raw
RESP client on asyncio streams, over one connection to a local redis-server.

    python benchmarks/redis_client.py [--commands 100000] [--batch 1000] [--rounds 5]
                                      [--parser hiredis|python] [--implementations ...]

Workloads, each half SET and half GET (keys from a set of 1000, 1-byte values):
`one at a time` (each command waits for its reply: round trips), `in flight` (`batch`
commands issued, each as its own command, then all their replies awaited: the client's
normal pipelining, many coroutines sharing one socket) and `pipeline` (`batch` commands
packed into one write by ``pipeline()``). Both sides use the same parser (hiredis's
Reader, or ours with --parser python) and are built alike (one write per command, a
FIFO of futures, one reading coroutine), so they differ by their framework.

The method is run.py's: the server is started once (tests/redis_server.py, no
persistence), every measurement runs in a fresh process, rounds interleave the
implementations, and the table gives medians over rounds; ratio = tinytornado / asyncio
commands/s (above 1: tinytornado is faster). Each process first checks that the
commands did what they should (SET replies OK, GETs read back what was set).
"""
from __future__ import absolute_import, division, print_function

import argparse
import os
import sys
import tempfile
import timeit

import machine
from common import (DEFAULT_PEERS, Unavailable, failures, import_optional, json_from_child,
                    print_measurement)
from report import median

__all__ = ['main', 'commands_for']

HERE = os.path.abspath(__file__)
WORKLOADS = ['one at a time', 'in flight', 'pipeline']
KEYS = 1000


def commands_for(batch):
    """One batch: SET and GET alternating over `KEYS` keys."""
    commands = []
    for i in range(batch // 2):
        key = 'k%d' % (i % KEYS)
        commands += [('SET', key, 'v'), ('GET', key)]
    return commands


def reader_class_for(parser):
    resp = import_optional('tinytornado.crawler.resp')
    if parser == 'python':
        return resp.PythonReader
    if resp.hiredis is None:
        raise Unavailable('hiredis is not installed')
    return resp.hiredis.Reader


def run_tinytornado(port, workload, count, batch, commands, reader_class, clock):
    """Seconds that `count` commands of `workload` took on tinytornado."""
    gen = import_optional('tinytornado.gen')
    redisclient = import_optional('tinytornado.crawler.redisclient')
    io_loop = import_optional('tinytornado.ioloop').IOLoop.current()
    client = redisclient.RedisClient('redis://127.0.0.1:%d/0' % port,
                                     reader_class=reader_class)

    @gen.coroutine
    def one_at_a_time():
        for i in range(count // 2):
            yield client.execute('SET', 'k%d' % (i % KEYS), 'v')
            yield client.execute('GET', 'k%d' % (i % KEYS))

    @gen.coroutine
    def in_flight():
        for _ in range(0, count, batch):
            yield [client.execute(*command) for command in commands]

    @gen.coroutine
    def pipelined():
        for _ in range(0, count, batch):
            yield client.pipeline(commands)

    @gen.coroutine
    def timed():
        yield client.execute('PING')
        start = clock()
        yield {'one at a time': one_at_a_time, 'in flight': in_flight,
               'pipeline': pipelined}[workload]()
        raise gen.Return(clock() - start)

    try:
        return io_loop.run_sync(timed)
    finally:
        client.close()


def check_results(port, commands, reader_class):
    """The commands' replies, on tinytornado, are what Redis should answer."""
    gen = import_optional('tinytornado.gen')
    redisclient = import_optional('tinytornado.crawler.redisclient')
    client = redisclient.RedisClient('redis://127.0.0.1:%d/0' % port,
                                     reader_class=reader_class)
    replies = import_optional('tinytornado.ioloop').IOLoop.current().run_sync(
        lambda: client.pipeline(commands))
    client.close()
    if replies != [b'OK', b'v'] * (len(commands) // 2):
        raise AssertionError('unexpected replies: %r' % (replies[:4],))


def measure(implementation, workload, port, count, batch, parser):
    """One run in this process: {'commands_per_second': n}."""
    reader_class = reader_class_for(parser)
    commands = commands_for(batch)
    check_results(port, commands, reader_class)
    if implementation == 'tinytornado':
        run = run_tinytornado
    elif sys.version_info[0] < 3:
        raise Unavailable('Python 2 has no asyncio')
    else:
        from redis_client_asyncio_py3 import run_asyncio as run
    if workload == 'one at a time':
        count = min(count, 20000)  # round trips: 100000 would take long for little more
    seconds = run(port, workload, count, batch, commands, reader_class, timeit.default_timer)
    return {'commands_per_second': count / seconds}


def measure_in_child(implementation, workload, port, args):
    command = [sys.executable, HERE, '--measure', implementation, workload, str(port),
               '--commands', str(args.commands), '--batch', str(args.batch),
               '--parser', args.parser]
    return json_from_child(command)


def measure_rounds(port, workloads, implementations, args):
    """{(workload, implementation): [report per round]}, implementations interleaved."""
    reports = {}
    for round_number in range(args.rounds):
        for workload in workloads:
            for implementation in implementations:
                report = measure_in_child(implementation, workload, port, args)
                reports.setdefault((workload, implementation), []).append(report)
                sys.stderr.write('  round %d %-14s %-12s %s\n' % (
                    round_number + 1, workload, implementation,
                    '%.0f/s' % report['commands_per_second']
                    if 'commands_per_second' in report else report))
    return reports


def _rates(reports):
    if any('commands_per_second' not in report for report in reports):
        return None
    return [report['commands_per_second'] for report in reports]


def _cell(reports):
    rates = _rates(reports)
    if rates is None:
        return reports[0].get('unavailable', 'FAILED')
    return '%.0f [%.0f-%.0f]' % (median(rates), min(rates), max(rates))


def table(reports, workloads, implementations, args):
    peers = [name for name in implementations if name != 'tinytornado']
    rows = [['workload'] + implementations + ['tinytornado / ' + peer for peer in peers]]
    rows.append(['---'] * len(rows[0]))
    for workload in workloads:
        by_name = dict((name, reports[workload, name]) for name in implementations)
        ratios = []
        for peer in peers:
            tiny, other = _rates(by_name['tinytornado']), _rates(by_name[peer])
            ratios.append('%.2fx' % (median(tiny) / median(other)) if tiny and other else '-')
        rows.append([workload] + [_cell(by_name[name]) for name in implementations] + ratios)
    title = ('Redis commands/s over one connection (%s parser; %d commands, batches of %d, '
             'one at a time: at most 20000), median [min-max] over %d rounds'
             % (args.parser, args.commands, args.batch, args.rounds))
    return '\n'.join([title, ''] + ['| ' + ' | '.join(row) + ' |' for row in rows])


def start_server():
    """A redis-server on a free port, from the tests' fixture module."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), 'tests'))
    import redis_server
    program = redis_server.redis_server_path()
    if program is None:
        raise SystemExit('redis-server is not installed (Debian package redis-server)')
    server = redis_server.RedisServer(program, tempfile.mkdtemp(prefix='redis-bench-'))
    server.start()
    return server


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--commands', type=int, default=100000)
    parser.add_argument('--batch', type=int, default=1000)
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--parser', choices=['hiredis', 'python'], default='hiredis')
    parser.add_argument('--implementations', default=DEFAULT_PEERS)
    parser.add_argument('--workloads', default=','.join(WORKLOADS),
                        help='comma-separated subset of: %s' % ', '.join(WORKLOADS))
    parser.add_argument('--measure', nargs=3, metavar=('IMPLEMENTATION', 'WORKLOAD', 'PORT'),
                        help='(internal) one measurement in this process, as JSON')
    args = parser.parse_args(argv)
    if args.measure:
        implementation, workload, port = args.measure
        return print_measurement(lambda: measure(implementation, workload, int(port),
                                                 args.commands, args.batch, args.parser))
    workloads = args.workloads.split(',')
    unknown = sorted(set(workloads) - set(WORKLOADS))
    if unknown:
        parser.error('unknown workloads: %s' % ', '.join(unknown))
    implementations = args.implementations.split(',')
    print(machine.describe() + '\n')
    server = start_server()
    try:
        reports = measure_rounds(server.port, workloads, implementations, args)
    finally:
        server.stop()
    print(table(reports, workloads, implementations, args))
    failed = failures(reports)
    for line in failed:
        print(line)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
