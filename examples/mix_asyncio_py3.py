"""Tornado-style coroutines and asyncio code in one program, on one loop (Python 3 only):
run it and read the output beside the code.

    python examples/mix_asyncio_py3.py
"""
import asyncio
import time

from tinytornado import gen, queues
from tinytornado.concurrent import CancelledError
from tinytornado.ioloop import IOLoop
from tinytornado.platform.asyncio import AsyncIOMainLoop

started = time.time()


def say(message):
    print('%5.2fs  %s' % (time.time() - started, message))


@gen.coroutine
def legacy_fetch(name, seconds):
    """Old code, unchanged: a generator coroutine on tinytornado's API."""
    yield gen.sleep(seconds)
    raise gen.Return('%s after %.2fs' % (name, seconds))


@gen.coroutine
def legacy_calls_asyncio():
    """Old code may yield asyncio things too: a Future, a Task, a native coroutine."""
    value = yield asyncio.sleep(0.05, result='asyncio.sleep, yielded')
    raise gen.Return(value)


@gen.coroutine
def legacy_slow():
    try:
        yield gen.sleep(10)
    except CancelledError:
        say('legacy_slow: cancelled by asyncio.wait_for, cleaning up')
        raise


async def modern_consumer(queue, seen):
    """New code awaits tinytornado Futures: here, a tinytornado Queue's."""
    while True:
        seen.append(await queue.get())
        queue.task_done()


async def main():
    # Adopt the running asyncio loop: tinytornado's timers and callbacks now run on it.
    io_loop = AsyncIOMainLoop(make_current=False)
    io_loop.make_current()
    queue, seen = queues.Queue(), []
    consumer = asyncio.ensure_future(modern_consumer(queue, seen))
    results = await asyncio.gather(
        legacy_fetch('a', 0.1), legacy_fetch('b', 0.05), legacy_calls_asyncio())
    for result in results:
        say(result)
        await queue.put(result)
    await queue.join()
    say('the asyncio consumer saw %d items' % len(seen))
    try:
        await asyncio.wait_for(legacy_slow(), 0.05)
    except asyncio.TimeoutError:
        say('asyncio.wait_for timed out')
    consumer.cancel()
    await asyncio.gather(consumer, return_exceptions=True)  # Let it finish cancelling.
    IOLoop.clear_current()
    io_loop.close()  # The asyncio loop stays open: it is not ours.
    return seen


if __name__ == '__main__':
    asyncio_loop = asyncio.new_event_loop()  # asyncio.run() exists only from 3.7 on.
    asyncio_loop.run_until_complete(main())
    asyncio_loop.close()
