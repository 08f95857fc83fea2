"""Requests/s of tinytornado's HTTP server beside Tornado 5.1.1 (2.7), Tornado 6 and
aiohttp.web (3.x), loaded by wrk in the same run (issue 30).

    python benchmarks/http_server.py [--rounds 5] [--seconds 5] [--connections 50]
        [--python27 PY] [--tornado51 PY] [--python3 PY] [--peers3 PY]
        [--client wrk|python] [--no-pin]

Each server is a subprocess of the interpreter given: tinytornado on `--python27` and on
`--python3`, Tornado 5.1.1 on `--tornado51`, Tornado 6 and aiohttp on `--peers3`. An
option left out falls back to this interpreter for its major version (so a plain run
compares whatever this venv has installed), and a row whose interpreter cannot import its
framework is "not available". Every server (http_server_tornado.py,
http_server_aiohttp_py3.py) is one process, one loop, no debug and no access log, and
serves the same two URLs: ``/``, a handler writing "Hello, world", and
``/static/file.txt``, a 4,096-byte file through the framework's static file handler.

Per round, for each server in turn (rows interleaved A B C D E A B C D E ...): start it,
fetch both URLs once and check status and body, load ``/`` for 1 s as a warm-up, then
load ``/`` and ``/static/file.txt`` for `--seconds` each, and stop it. The load is wrk
(``-t1 -c<connections>``), or when wrk is absent (or ``--client python``) a Python client
of this interpreter holding the same number of keep-alive connections, each sending its
next request when the previous response is complete. On a machine with two or more
cores the server is pinned to CPU 0 and the load to CPU 1 with taskset (``--no-pin`` to
leave them free). The table gives medians over rounds with their min-max; ratio =
tinytornado's median / that row's, on the same Python (above 1: tinytornado is faster).
"""
from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import timeit

import machine
from nginx_site import find_program
from report import median

__all__ = ['main', 'python_load', 'SERVERS']

HERE = os.path.dirname(os.path.abspath(__file__))
STATIC_SIZE = 4096
URLS = [('hello', '/', b'Hello, world'), ('static', '/static/file.txt', None)]
START_TIMEOUT = 20.0
WARM_UP_SECONDS = 1


class Server(object):
    """One row: a framework served by one interpreter (named by an option)."""

    def __init__(self, label, option, framework, script):
        self.label, self.option, self.framework, self.script = label, option, framework, script

    def command(self, python, static_dir):
        script = os.path.join(HERE, self.script)
        if self.script == 'http_server_tornado.py':
            return [python, script, self.framework, static_dir]
        return [python, script, static_dir]


SERVERS = [
    Server('tinytornado', 'python27', 'tinytornado', 'http_server_tornado.py'),
    Server('Tornado 5.1', 'tornado51', 'tornado', 'http_server_tornado.py'),
    Server('tinytornado', 'python3', 'tinytornado', 'http_server_tornado.py'),
    Server('Tornado 6', 'peers3', 'tornado', 'http_server_tornado.py'),
    Server('aiohttp', 'peers3', 'aiohttp', 'http_server_aiohttp_py3.py'),
]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--seconds', type=int, default=5, help='load time per URL')
    parser.add_argument('--connections', type=int, default=50)
    for option, what in [('python27', 'tinytornado on 2.7'),
                         ('tornado51', 'Tornado 5.1.1 on 2.7'),
                         ('python3', 'tinytornado on 3.x'),
                         ('peers3', 'Tornado 6 and aiohttp on 3.x')]:
        parser.add_argument('--' + option, metavar='PY', help='the interpreter for ' + what)
    parser.add_argument('--client', choices=['wrk', 'python'],
                        help='the load (default: wrk when installed, else python)')
    parser.add_argument('--no-pin', action='store_true',
                        help='do not pin the server and the load to one core each')
    parser.add_argument('--load', nargs=3, metavar=('PORT', 'PATH', 'SECONDS'),
                        help='(internal) run the Python load client and print JSON')
    args = parser.parse_args(argv)
    if args.client is None:
        args.client = 'wrk' if find_program('wrk') else 'python'
    elif args.client == 'wrk' and not find_program('wrk'):
        parser.error('wrk is not installed (apt-get install -y wrk)')
    own = 'python27' if sys.version_info[0] < 3 else 'python3'
    peers = 'tornado51' if sys.version_info[0] < 3 else 'peers3'
    for option in (own, peers):
        if getattr(args, option) is None:
            setattr(args, option, sys.executable)
    return args


# -- the Python load client ----------------------------------------------------------------

def _response_end(buffer):
    """(status, end offset) of the first complete response in `buffer`, or None."""
    head_end = buffer.find(b'\r\n\r\n')
    if head_end < 0:
        return None
    head = buffer[:head_end].decode('latin-1')
    length = re.search(r'\r\ncontent-length:\s*(\d+)', head, re.IGNORECASE)
    if length is None:
        raise ValueError('a response without Content-Length: %r' % head)
    end = head_end + 4 + int(length.group(1))
    if len(buffer) < end:
        return None
    return int(head.split(' ', 2)[1]), end


def python_load(port, path, connections, seconds):
    """{'requests_per_second', 'errors'}: `connections` keep-alive connections, each
    sending GET `path` again as soon as its previous response is complete."""
    request = ('GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n' % (path, port)).encode('ascii')
    poller = select.epoll()
    buffers, sockets = {}, {}
    for _ in range(connections):
        sock = socket.create_connection(('127.0.0.1', port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        sockets[sock.fileno()], buffers[sock.fileno()] = sock, b''
        poller.register(sock.fileno(), select.EPOLLIN)
    for sock in sockets.values():
        sock.sendall(request)
    done = errors = 0
    start = timeit.default_timer()
    deadline = start + seconds
    while timeit.default_timer() < deadline:
        for fd, _ in poller.poll(0.1):
            data = sockets[fd].recv(65536)
            if not data:
                raise RuntimeError('the server closed a keep-alive connection')
            buffer = buffers[fd] + data
            response = _response_end(buffer)
            while response is not None:
                status, end = response
                done += 1
                errors += status != 200
                buffer = buffer[end:]
                sockets[fd].sendall(request)  # blocking is fine: a request fits any buffer
                response = _response_end(buffer)
            buffers[fd] = buffer
    elapsed = timeit.default_timer() - start
    for sock in sockets.values():
        sock.close()
    return {'requests_per_second': done / elapsed, 'requests': done, 'errors': errors}


# -- one measurement -----------------------------------------------------------------------

def _pinning(args):
    return (not args.no_pin and os.sysconf('SC_NPROCESSORS_ONLN') >= 2
            and find_program('taskset') is not None)


def _pinned(command, cpu, args):
    return ['taskset', '-c', str(cpu)] + command if _pinning(args) else command


def cpu_seconds(pid):
    """User + system CPU seconds process `pid` has used so far."""
    with open('/proc/%d/stat' % pid) as stat:
        fields = stat.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def load(server_pid, port, path, seconds, args):
    """(requests/s, requests per CPU second of the server) of one load on `path`; raises
    RuntimeError on errors or non-200s."""
    cpu_before = cpu_seconds(server_pid)
    if args.client == 'python':
        command = [sys.executable, os.path.abspath(__file__), '--load', str(port), path,
                   str(seconds), '--connections', str(args.connections)]
        output = subprocess.check_output(_pinned(command, 1, args)).decode('utf-8')
        result = json.loads(output.strip().splitlines()[-1])
        if result['errors']:
            raise RuntimeError('%d responses were not 200' % result['errors'])
        rate, count = result['requests_per_second'], result['requests']
    else:
        command = ['wrk', '-t1', '-c%d' % args.connections, '-d%ds' % seconds,
                   'http://127.0.0.1:%d%s' % (port, path)]
        output = subprocess.check_output(_pinned(command, 1, args)).decode('utf-8', 'replace')
        if 'Non-2xx' in output or 'Socket errors' in output:
            raise RuntimeError('wrk saw errors:\n' + output)
        rate = float(re.search(r'Requests/sec:\s+([\d.]+)', output).group(1))
        count = int(re.search(r'(\d+) requests in', output).group(1))
    return rate, count / (cpu_seconds(server_pid) - cpu_before)


def fetch(port, path):
    """(status, header names, body) of one GET `path`, on a connection of its own."""
    sock = socket.create_connection(('127.0.0.1', port), timeout=10)
    try:
        sock.sendall(('GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' % path).encode('ascii'))
        buffer = b''
        while _response_end(buffer) is None:
            data = sock.recv(65536)
            if not data:
                raise RuntimeError('the server closed the connection: %r' % buffer)
            buffer += data
    finally:
        sock.close()
    status, end = _response_end(buffer)
    head, body = buffer[:end].split(b'\r\n\r\n', 1)
    names = [line.split(b':', 1)[0].decode('latin-1').title()
             for line in head.split(b'\r\n')[1:]]
    return status, names, body


class Running(object):
    """A server subprocess, started pinned, with its port and versions read."""

    def __init__(self, command, args):
        self.process = subprocess.Popen(_pinned(command, 0, args), stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE)
        line = self.process.stdout.readline().decode('utf-8').split()
        if len(line) != 4 or line[0] != 'PORT':
            self.stop()
            raise RuntimeError('the server did not start: %s%s' % (
                ' '.join(line), self.process.stderr.read().decode('utf-8', 'replace')))
        self.port = int(line[1])
        self.version, self.python = line[2], line[3]

    def stop(self):
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process.stdout.close()
        self.process.stderr.close()


def measure(server, python, static_dir, expected_static, args):
    """{'hello': rps, 'static': rps, 'version', 'python', 'headers'} of one round."""
    running = Running(server.command(python, static_dir), args)
    try:
        report = {'version': running.version, 'python': running.python, 'headers': {}}
        for name, path, body in URLS:
            status, headers, got = fetch(running.port, path)
            if status != 200 or got != (body or expected_static):
                raise RuntimeError('GET %s: %d %r' % (path, status, got[:80]))
            report['headers'][name] = headers
        pid = running.process.pid
        load(pid, running.port, '/', WARM_UP_SECONDS, args)
        for name, path, _ in URLS:
            report[name], report[name + ' per cpu'] = load(pid, running.port, path,
                                                          args.seconds, args)
        return report
    finally:
        running.stop()


def available(server, python):
    """Why `python` cannot run `server`, or None if it can."""
    if not python:
        return 'no interpreter given (--%s)' % server.option
    module = 'asyncio' if server.framework == 'aiohttp' else server.framework
    try:
        subprocess.check_output([python, '-c', 'import %s, %s' % (module, server.framework)],
                                stderr=subprocess.STDOUT)
    except (OSError, subprocess.CalledProcessError):
        return 'not available: %s cannot import %s' % (python, server.framework)
    return None


# -- the table -----------------------------------------------------------------------------

def _cell(rates):
    return '%.0f [%.0f-%.0f]' % (median(rates), min(rates), max(rates))


def table(servers, reports, suffix=''):
    """Markdown rows of the medians of each URL's report[name + suffix], with ratios."""
    unit = 'rps' if not suffix else 'req/CPU s'
    rows = [['implementation', 'Python', 'hello ' + unit, 'static ' + unit, 'hello ratio',
             'static ratio'], ['---', '---', '---:', '---:', '---:', '---:']]
    tiny = {}
    for server in servers:
        runs = reports[server]
        if server.framework == 'tinytornado' and runs and 'hello' in runs[0]:
            tiny[runs[0]['python'][:3]] = runs
    for server in servers:
        runs = reports[server]
        if not runs or 'hello' not in runs[0]:
            rows.append([server.label, '-', (runs[0] if runs else {}).get(
                'unavailable', 'FAILED'), '', '', ''])
            continue
        python = runs[0]['python']
        row = ['%s %s' % (server.label.split()[0], runs[0]['version']), python]
        ratios = []
        for name, _, _ in URLS:
            rates = [run[name + suffix] for run in runs]
            row.append(_cell(rates))
            base = tiny.get(python[:3])
            ratios.append('%.2fx' % (median([run[name + suffix] for run in base]) /
                                     median(rates)) if base else '-')
        rows.append(row + ratios)
    return '\n'.join('| ' + ' | '.join(row) + ' |' for row in rows)


def header_notes(servers, reports):
    """The response headers each server sent, per URL, to compare the work done."""
    lines = []
    for name, path, _ in URLS:
        lines.append('GET %s headers:' % path)
        for server in servers:
            runs = [run for run in reports[server] if 'headers' in run]
            if runs:
                lines.append('  %-12s %-7s %s' % (server.label.split()[0], runs[0]['python'],
                                                   ', '.join(sorted(runs[0]['headers'][name]))))
    return '\n'.join(lines)


def settings_line(args):
    if args.client == 'wrk':
        version = subprocess.Popen(['wrk', '-v'], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT).communicate()[0]
        client = '%s, -t1 -c%d -d%ds' % (
            version.decode('utf-8', 'replace').split(' [')[0], args.connections, args.seconds)
    else:
        client = ('the Python load client (wrk not used), %d keep-alive connections, %d s'
                  % (args.connections, args.seconds))
    pinning = ('server pinned to CPU 0, load to CPU 1 (taskset)' if _pinning(args)
               else 'no pinning')
    return 'Load: %s per URL after a %d s warm-up; %s; median [min-max] of %d rounds' % (
        client, WARM_UP_SECONDS, pinning, args.rounds)


def make_static_dir():
    """A temporary directory with file.txt, 4,096 seeded bytes; (dir, content)."""
    static_dir = tempfile.mkdtemp(prefix='http-bench-')
    content = bytes(bytearray((i * 7919 + 13) % 95 + 32 for i in range(STATIC_SIZE)))
    with open(os.path.join(static_dir, 'file.txt'), 'wb') as out:
        out.write(content)
    return static_dir, content


def main(argv):
    args = parse_args(argv)
    if args.load:
        port, path, seconds = args.load
        print(json.dumps(python_load(int(port), path, args.connections, float(seconds))))
        return 0
    print(machine.describe())
    servers = []
    reports = {}
    for server in SERVERS:
        python = getattr(args, server.option)
        reason = available(server, python)
        reports[server] = [{'unavailable': reason}] if reason else []
        servers.append(server)
    static_dir, content = make_static_dir()
    failed = []
    try:
        for round_number in range(args.rounds):
            for server in servers:
                if reports[server] and 'unavailable' in reports[server][0]:
                    continue
                python = getattr(args, server.option)
                try:
                    report = measure(server, python, static_dir, content, args)
                except (RuntimeError, subprocess.CalledProcessError) as exc:
                    failed.append('%s (%s): %s' % (server.label, python, exc))
                    sys.stderr.write('FAILED %s\n' % failed[-1])
                    continue
                reports[server].append(report)
                sys.stderr.write('  round %d %-12s %-7s hello %6.0f/s (%6.0f/CPU s) static '
                                 '%6.0f/s (%6.0f/CPU s)\n' % (
                                     round_number + 1, server.label, report['python'],
                                     report['hello'], report['hello per cpu'],
                                     report['static'], report['static per cpu']))
    finally:
        for name in os.listdir(static_dir):
            os.remove(os.path.join(static_dir, name))
        os.rmdir(static_dir)
    print(settings_line(args))
    print('Interpreters: ' + '; '.join('%s: %s' % (option, getattr(args, option)) for option
                                       in ('python27', 'tornado51', 'python3', 'peers3')))
    print()
    print(table(servers, reports))
    print()
    print('Requests per CPU second of the server process (user + system, from /proc), '
          'less disturbed by other load on the machine:')
    print()
    print(table(servers, reports, ' per cpu'))
    print()
    print(header_notes(servers, reports))
    for line in failed:
        print('FAILED ' + line)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
