"""Legacy coroutines awaited from asyncio.run() (collected through test_asyncio_run.py).

Python 3 only. Inside a running asyncio loop, a thread with no current tinytornado loop
finds the asyncio loop's IOLoop current, as in Tornado 5.1, so tinytornado code that asks
IOLoop.current() for its loop (gen.sleep, with_timeout, locks, queues, the HTTP client)
runs on asyncio's loop instead of waiting on a loop nobody runs. Each case runs
asyncio.run() in a thread of its own, joined with a limit, so a hang fails the test
instead of hanging the suite (once hung, even asyncio.run's own clean-up would wait).
"""
import asyncio
import datetime
import os
import subprocess
import sys
import threading

import pytest

from tinytornado import gen, locks, queues
from tinytornado.concurrent import CancelledError, Future
from tinytornado.httpclient import AsyncHTTPClient
from tinytornado.ioloop import IOLoop, PollIOLoop
from tinytornado.platform.asyncio import AsyncIOMainLoop, BaseAsyncIOLoop, _ioloops

HANG_LIMIT = 20  # seconds: far above what each case needs on a loaded machine


def run_in_fresh_thread(func, *args):
    """`func(*args)`'s result (or exception) from a new thread, which has no current
    tinytornado loop; a call that is still running after HANG_LIMIT fails the test."""
    outcome = {}

    def target():
        try:
            outcome['result'] = func(*args)
        except BaseException as e:  # Re-raised in the test's thread, below.
            outcome['error'] = e

    thread = threading.Thread(target=target, name='asyncio-run-case')
    thread.daemon = True  # A hung case must not keep the test process alive.
    thread.start()
    thread.join(HANG_LIMIT)
    if thread.is_alive():
        pytest.fail('still running after %ss: hung' % HANG_LIMIT)
    if 'error' in outcome:
        raise outcome['error']
    return outcome['result']


def asyncio_run(main):
    """asyncio.run(main()) in a fresh thread, with the limit."""
    return run_in_fresh_thread(asyncio.run, main())


@gen.coroutine
def legacy_double(value, delay=0.01):
    yield gen.sleep(delay)
    raise gen.Return(value * 2)


def test_current_is_the_running_asyncio_loops_main_loop_and_not_made_current():
    async def main():
        first, again = IOLoop.current(), IOLoop.current()
        return (first, again, asyncio.get_running_loop(), first.is_running(),
                IOLoop.current(instance=False))

    def run_then_look():
        found = asyncio.run(main())
        return found + (IOLoop.current(instance=False),)
    first, again, asyncio_loop, running, without_instance, after = \
        run_in_fresh_thread(run_then_look)
    assert type(first) is AsyncIOMainLoop and first.asyncio_loop is asyncio_loop
    assert again is first and without_instance is first and running
    # Not made the thread's current loop: once asyncio.run() returned, the thread has none.
    assert after is None


def test_await_legacy_coroutine_under_asyncio_run():
    async def main():
        return await legacy_double(21)
    assert asyncio_run(main) == 42


def test_await_legacy_coroutine_on_uvloops_loop():
    uvloop = pytest.importorskip('uvloop')

    async def main():
        value = await asyncio.wait_for(legacy_double(21), 10)
        return type(IOLoop.current().asyncio_loop), value

    def run_on_uvloop():
        asyncio_loop = uvloop.new_event_loop()
        try:
            return asyncio_loop.run_until_complete(main())
        finally:
            asyncio_loop.close()
    assert run_in_fresh_thread(run_on_uvloop) == (uvloop.Loop, 42)


def test_wait_for_returns_a_legacy_coroutines_result_in_time():
    async def main():
        return await asyncio.wait_for(legacy_double(4), 10)
    assert asyncio_run(main) == 8


def test_wait_for_times_out_a_legacy_coroutine_and_cancels_it():
    trace = []

    @gen.coroutine
    def slow():
        try:
            yield gen.sleep(30)
        except CancelledError:
            trace.append('cancelled')
            raise

    async def main():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(slow(), 0.05)
        return 'timed out'
    assert asyncio_run(main) == 'timed out'
    assert trace == ['cancelled']


def test_gen_sleep_and_with_timeout_run_on_asyncios_loop():
    async def main():
        asyncio_loop = asyncio.get_running_loop()
        started = asyncio_loop.time()
        await gen.sleep(0.05)
        slept = asyncio_loop.time() - started
        in_time = await gen.with_timeout(datetime.timedelta(seconds=10), legacy_double(3))
        started = asyncio_loop.time()
        with pytest.raises(gen.TimeoutError):
            await gen.with_timeout(datetime.timedelta(seconds=0.05), Future())
        return slept, in_time, asyncio_loop.time() - started
    slept, in_time, waited = asyncio_run(main)
    assert slept >= 0.04 and in_time == 6 and waited >= 0.04


def test_legacy_queue_and_locks_under_asyncio_run():
    @gen.coroutine
    def producer(queue):
        for item in range(3):
            yield queue.put(item)
            yield gen.sleep(0.001)
        yield queue.put(None)

    @gen.coroutine
    def consumer(queue, lock, seen):
        while True:
            item = yield queue.get()
            with (yield lock.acquire()):
                seen.append(item)
            if item is None:
                raise gen.Return(seen)

    async def main():
        queue, lock, event = queues.Queue(maxsize=1), locks.Lock(), locks.Event()
        asyncio_loop = asyncio.get_running_loop()
        asyncio_loop.call_later(0.01, event.set)
        await event.wait(datetime.timedelta(seconds=10))
        producing = producer(queue)
        seen = await consumer(queue, lock, [])
        await producing
        # A wait with a deadline ends by the deadline, on asyncio's clock.
        with pytest.raises(gen.TimeoutError):
            await queue.get(datetime.timedelta(seconds=0.05))
        notified = await locks.Condition().wait(datetime.timedelta(seconds=0.05))
        return seen, notified
    assert asyncio_run(main) == ([0, 1, 2, None], False)


async def serve_one_response(body):
    """A loopback HTTP server on asyncio's own streams: (server, port)."""
    async def handle(reader, writer):
        await reader.readuntil(b'\r\n\r\n')
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s'
                     % (len(body), body))
        await writer.drain()
        writer.close()
    server = await asyncio.start_server(handle, '127.0.0.1', 0)
    return server, server.sockets[0].getsockname()[1]


def test_async_http_client_fetches_under_asyncio_run():
    async def main():
        server, port = await serve_one_response(b'from asyncio')
        client = AsyncHTTPClient()
        try:
            url = 'http://127.0.0.1:%d/' % port
            response = await client.fetch(url, request_timeout=10)
            timed = await asyncio.wait_for(client.fetch(url, request_timeout=10), 10)
            return response.body, timed.code, client.io_loop is IOLoop.current()
        finally:
            client.close()
            server.close()
            await server.wait_closed()
    assert asyncio_run(main) == (b'from asyncio', 200, True)


def test_each_asyncio_loop_gets_its_own_ioloop_and_closed_ones_are_dropped():
    async def main():
        return IOLoop.current(), asyncio.get_running_loop()

    def two_runs():
        first, first_asyncio = asyncio.run(main())
        second, second_asyncio = asyncio.run(main())
        return first, first_asyncio, second, second_asyncio
    first, first_asyncio, second, second_asyncio = run_in_fresh_thread(two_runs)
    assert first is not second and second.asyncio_loop is second_asyncio
    assert first.asyncio_loop is first_asyncio and first_asyncio.is_closed()
    # Building the second dropped the first, whose asyncio loop asyncio.run() closed.
    assert first_asyncio not in _ioloops


def test_threads_running_asyncio_each_find_their_own_loop():
    barrier = threading.Barrier(2, timeout=HANG_LIMIT)

    async def main():
        barrier.wait()  # Both asyncio loops run at once.
        loop = IOLoop.current()
        value = await legacy_double(5)
        return loop.asyncio_loop is asyncio.get_running_loop(), loop, value

    results = []
    threads = [threading.Thread(target=lambda: results.append(run_in_fresh_thread(
        asyncio.run, main()))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_LIMIT * 2)
    assert len(results) == 2
    (own_a, loop_a, value_a), (own_b, loop_b, value_b) = results
    assert own_a and own_b and loop_a is not loop_b and value_a == value_b == 10


def test_an_asyncio_loop_built_by_the_user_is_the_one_current_finds():
    async def main():
        made = AsyncIOMainLoop(make_current=False)
        try:
            return made, IOLoop.current(), await legacy_double(1)
        finally:
            made.close()
    made, found, value = asyncio_run(main)
    assert found is made and value == 2


def test_a_loop_the_user_made_current_still_wins_inside_asyncio():
    # Documented difference from Tornado 5.1: the thread's own current loop comes first.
    def run_with_current_loop():
        own = PollIOLoop(make_current=True)
        try:
            async def main():
                return IOLoop.current()
            return own, asyncio.run(main())
        finally:
            IOLoop.clear_current()
            own.close()
    own, found = run_in_fresh_thread(run_with_current_loop)
    assert found is own


def test_without_a_running_asyncio_loop_current_is_tinytornados_own_as_before():
    def look():
        asyncio_loop = asyncio.new_event_loop()  # Exists, but does not run.
        asyncio.set_event_loop(asyncio_loop)
        try:
            loop = IOLoop.current()
            same = IOLoop.current() is loop and IOLoop.current(instance=False) is loop
            value = loop.run_sync(lambda: legacy_double(7), timeout=10)
            loop.close()
            return type(loop), same, value
        finally:
            asyncio.set_event_loop(None)
            asyncio_loop.close()
    loop_class, same, value = run_in_fresh_thread(look)
    assert loop_class is PollIOLoop and not issubclass(loop_class, BaseAsyncIOLoop)
    assert same and value == 14


def test_a_program_that_never_runs_asyncio_never_imports_it():
    code = '\n'.join([
        'import sys',
        'from tinytornado import gen',
        'from tinytornado.ioloop import IOLoop',
        'loop = IOLoop.current()',
        'assert IOLoop.current() is loop and IOLoop.current(instance=False) is loop',
        'assert loop.run_sync(lambda: gen.sleep(0.001)) is None',
        'print(type(loop).__name__, sorted(m for m in sys.modules',
        '      if m == "asyncio" or m.startswith("tinytornado.platform")))',
    ])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    output = subprocess.check_output([sys.executable, '-c', code], env=env, timeout=60)
    assert output.decode().split() == ['PollIOLoop', '[]']
