"""``async for`` over a Queue, as in Tornado 5.1 (collected through test_queues.py; Python 3
syntax, which 2.7 cannot parse). tinytornado.platform.asyncio lets the coroutines yield
native ones, on every kind of loop."""
import tinytornado.platform.asyncio  # noqa: F401  (native coroutines become yieldable)
from tinytornado.queues import Queue


def test_async_for_takes_each_item_as_it_comes(io_loop, virtual_clock):
    q = Queue()
    trace = []

    async def consumer():
        async for item in q:
            trace.append((io_loop.time(), item))
            q.task_done()
            if item == 'last':
                return 'stopped'

    q.put_nowait('queued')
    io_loop.call_later(1, q.put_nowait, 'later')
    io_loop.call_later(2, q.put_nowait, 'last')
    assert (yield consumer()) == 'stopped'
    assert trace == [(0, 'queued'), (1, 'later'), (2, 'last')]
    yield q.join()
