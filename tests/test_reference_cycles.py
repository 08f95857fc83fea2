"""Waits that end by a cancellation or a timeout leave no reference cycle behind.

A cycle is freed only by the garbage collector, whose full passes walk every live object:
10,000 fetches timing out together, each leaving a cycle that held its whole call stack,
made the collector run long passes in the middle of the timeouts. Each test here runs
with the collector off and counts what `gc.collect()` then finds.
"""
from __future__ import absolute_import, division, print_function

import gc
import socket

import pytest

from tinytornado import gen
from tinytornado.concurrent import Future, TimeoutError
from tinytornado.httpclient import AsyncHTTPClient


@pytest.fixture
def collector_off():
    """Turns the collector off for the test; `collector_off()` collects and says how
    many objects were garbage."""
    gc.collect()
    gc.disable()
    yield gc.collect
    gc.enable()


def run_until(io_loop, deadline):
    io_loop.call_at(deadline, io_loop.stop)
    io_loop.start()


def test_a_cancelled_future_is_freed_without_the_collector(collector_off):
    future = Future()
    assert future.cancel() and future.cancelled()
    del future
    assert collector_off() == 0


def test_with_timeout_of_a_done_future_is_freed_without_the_collector(io_loop, collector_off):
    done = Future()
    done.set_result(42)
    assert gen.with_timeout(io_loop.time() + 1, done).result() == 42
    del done
    assert collector_off() == 0


def test_with_timeout_timing_out_is_freed_without_the_collector(io_loop, virtual_clock,
                                                                 collector_off):
    run_until(io_loop, 1)  # the loop's own first-run structures, made before counting
    collector_off()
    never = Future()
    result = gen.with_timeout(io_loop.time() + 1, never)
    run_until(io_loop, io_loop.time() + 2)
    assert isinstance(result.exception(), TimeoutError) and not never.done()
    del result, never
    assert collector_off() == 0


@pytest.fixture
def silent_url():
    """The URL of a listening socket that never accepts (the kernel completes the
    connections): fetches of it wait until they time out."""
    listener = socket.socket()
    listener.bind(('127.0.0.1', 0))
    listener.listen(128)
    yield 'http://127.0.0.1:%d/' % listener.getsockname()[1]
    listener.close()


def test_queued_fetches_timing_out_are_freed_without_the_collector(io_loop, collector_off,
                                                                   silent_url):
    url = silent_url
    client = AsyncHTTPClient(force_instance=True, max_clients=1)
    in_flight = client.fetch(url)  # holds the only slot throughout
    try:
        collector_off()
        queued = [gen.with_timeout(io_loop.time() + 0.05, client.fetch(url))
                  for _ in range(50)]
        run_until(io_loop, io_loop.time() + 0.2)
        assert [type(future.exception()) for future in queued] == [TimeoutError] * 50
        del queued
        assert collector_off() == 0
        assert not in_flight.done()
    finally:
        in_flight.cancel()
        run_until(io_loop, io_loop.time() + 0.05)  # its coroutine ends, its socket closes
        client.close()


def test_fetches_timing_out_in_flight_are_freed_without_the_collector(io_loop, collector_off,
                                                                        silent_url):
    url = silent_url
    client = AsyncHTTPClient(force_instance=True, max_clients=51)
    # Keeps the origin's pool alive throughout (2.7's OrderedDict, in it, is a cycle).
    holder = client.fetch(url)
    try:
        # A first timeout, for the structures made once.
        with pytest.raises(TimeoutError):
            io_loop.run_sync(lambda: gen.with_timeout(io_loop.time() + 0.05,
                                                      client.fetch(url)))
        collector_off()
        in_flight = [gen.with_timeout(io_loop.time() + 0.05, client.fetch(url))
                     for _ in range(50)]
        run_until(io_loop, io_loop.time() + 0.2)
        assert [type(future.exception()) for future in in_flight] == [TimeoutError] * 50
        del in_flight
        assert collector_off() == 0
    finally:
        holder.cancel()
        run_until(io_loop, io_loop.time() + 0.05)  # its coroutine ends, its socket closes
        client.close()
