"""``async with`` on Semaphore and Lock, as in Tornado 5.1 (collected through test_locks.py;
Python 3 syntax, which 2.7 cannot parse). tinytornado.platform.asyncio lets the coroutines
yield native ones, on every kind of loop."""
import pytest

import tinytornado.platform.asyncio  # noqa: F401  (native coroutines become yieldable)
from tinytornado import gen
from tinytornado.concurrent import CancelledError
from tinytornado.locks import Lock, Semaphore


@pytest.mark.parametrize('make', [Lock, lambda: Semaphore(1)], ids=['Lock', 'Semaphore'])
def test_async_with_takes_turns_and_binds_none(io_loop, make):
    guard = make()
    trace = []

    async def critical(name):
        async with guard as bound:
            trace.append(('enter', name, bound))
            await gen.moment
            trace.append(('exit', name))

    yield [critical(name) for name in 'abc']
    assert trace == [('enter', 'a', None), ('exit', 'a'), ('enter', 'b', None), ('exit', 'b'),
                     ('enter', 'c', None), ('exit', 'c')]
    assert guard.acquire().done()       # the last one released it


def test_async_with_releases_when_the_block_raises(io_loop):
    lock = Lock()

    async def fails():
        async with lock:
            raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        yield fails()
    assert lock.acquire().done()


def test_cancelling_an_async_with_that_waits_leaves_the_line(io_loop):
    semaphore = Semaphore(0)
    trace = []

    async def worker():
        try:
            async with semaphore:
                trace.append('entered')
        except BaseException as e:  # asyncio's CancelledError is a BaseException on 3.8+
            trace.append(type(e).__name__)
            raise

    running = gen.convert_yielded(worker())
    yield gen.moment
    assert len(semaphore._waiters) == 1
    running.cancel()
    with pytest.raises(CancelledError):
        yield running
    assert len(semaphore._waiters) == 0 and trace == ['CancelledError']
    semaphore.release()
    assert semaphore._value == 1
