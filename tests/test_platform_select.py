"""tinytornado.platform.select (SelectIOLoop, and its poller) and tinytornado.platform.epoll:
the loops legacy code configures by Tornado 5.1's names.

Every test of tests/test_ioloop.py runs here again, on a SelectIOLoop.
"""
from __future__ import absolute_import, division, print_function

import os
import select
import socket
import subprocess
import sys

import pytest

from net_helpers import open_fds
from test_ioloop import *  # noqa: F401,F403  (the loop's tests, on the loop below)
import tinytornado
from tinytornado import gen
from tinytornado._poller import ERROR, READ, WRITE, SelectPoller
from tinytornado.ioloop import IOLoop, PollIOLoop
from tinytornado.iostream import IOStream
from tinytornado.platform.epoll import EPollIOLoop
from tinytornado.platform.select import SelectIOLoop, _Select


@pytest.fixture
def io_loop_class():
    """The loop every io_loop here is: test_ioloop's tests run on it."""
    return SelectIOLoop


@pytest.fixture
def socket_pair():
    pair = socket.socketpair()
    yield pair
    for sock in pair:
        sock.close()


# -- the poller ---------------------------------------------------------------------------

def test_select_poller_reports_readiness_in_the_loops_bits(socket_pair):
    left, right = socket_pair
    poller = SelectPoller()
    poller.register(left.fileno(), READ | ERROR)
    assert poller.poll(0) == []
    right.send(b'x')
    assert poller.poll(0) == [(left.fileno(), READ)]
    poller.modify(left.fileno(), READ | WRITE | ERROR)
    assert poller.poll(0) == [(left.fileno(), READ | WRITE)]
    poller.unregister(left.fileno())
    assert poller.poll(0) == []
    poller.close()


def test_select_poller_reports_a_hang_up_watched_for_errors_alone_as_readable(socket_pair):
    left, right = socket_pair
    poller = SelectPoller()
    poller.register(left.fileno(), ERROR)
    assert poller.poll(0) == []
    right.close()
    assert poller.poll(0) == [(left.fileno(), READ)]
    poller.close()


def test_select_poller_refuses_a_descriptor_registered_twice(socket_pair):
    poller = SelectPoller()
    poller.register(socket_pair[0].fileno(), READ)
    with pytest.raises(KeyError):
        poller.register(socket_pair[0].fileno(), WRITE)
    poller.close()


def test_tornados_name_for_the_poller_is_the_select_poller():
    assert _Select is SelectPoller


# -- SelectIOLoop ------------------------------------------------------------------------

def test_select_io_loop_waits_with_select(io_loop):
    assert isinstance(io_loop, PollIOLoop)
    assert isinstance(io_loop._poller, SelectPoller)


def test_a_stream_on_select_io_loop_reads_and_writes(io_loop, socket_pair):
    left, right = IOStream(socket_pair[0]), IOStream(socket_pair[1])

    @gen.coroutine
    def exchange():
        left.write(b'ping\n')
        line = yield right.read_until(b'\n')
        yield right.write(line.upper())
        reply = yield left.read_bytes(5)
        raise gen.Return(reply)

    assert io_loop.run_sync(exchange, timeout=10) == b'PING\n'


def test_a_select_io_loop_refused_as_current_leaves_nothing_open(no_current_loop):
    current = IOLoop(make_current=True)
    before = open_fds()
    with pytest.raises(RuntimeError):
        SelectIOLoop(make_current=True)
    assert open_fds() == before
    assert IOLoop.current() is current
    current.close()


@pytest.mark.parametrize('name, loop_class', [
    ('tornado.platform.select.SelectIOLoop', SelectIOLoop),
    ('tornado.platform.epoll.EPollIOLoop', EPollIOLoop),
])
def test_configuring_a_loop_by_tornados_name_makes_it(name, loop_class,
                                                      saved_ioloop_configuration,
                                                      no_current_loop):
    IOLoop.configure(name)
    loop = IOLoop.current()
    assert type(loop) is loop_class
    assert loop.run_sync(lambda: gen.sleep(0), timeout=10) is None
    loop.close()


def test_configuring_select_io_loop_in_a_fresh_interpreter():
    # What legacy code does at start-up, before any loop exists.
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(tinytornado.__file__)))
    output = subprocess.check_output([sys.executable, '-c', '; '.join([
        'from tinytornado.ioloop import IOLoop',
        'IOLoop.configure("tornado.platform.select.SelectIOLoop")',
        'print(type(IOLoop.current()).__name__)',
    ])], env=env)
    assert output.decode().strip() == 'SelectIOLoop'


# -- EPollIOLoop -------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(select, 'epoll'), reason='epoll is Linux only')
def test_epoll_io_loop_runs_streams(no_current_loop, socket_pair):
    loop = EPollIOLoop(make_current=True)
    left, right = IOStream(socket_pair[0]), IOStream(socket_pair[1])

    @gen.coroutine
    def exchange():
        yield left.write(b'hello')
        data = yield right.read_bytes(5)
        raise gen.Return(data)

    assert loop.run_sync(exchange, timeout=10) == b'hello'
    loop.close()


@pytest.mark.skipif(hasattr(select, 'epoll'), reason='this system has epoll')
def test_epoll_io_loop_without_epoll_says_so(no_current_loop):
    with pytest.raises(RuntimeError, match='epoll'):
        EPollIOLoop()
