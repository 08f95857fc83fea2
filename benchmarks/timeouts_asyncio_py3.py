"""timeouts.py's fetches written the asyncio way: ``asyncio.wait_for`` around a plain
connection, at most `in_flight` at once (a Semaphore standing for a client's pool)."""
import asyncio

__all__ = ['run_asyncio']


async def _fetch(port, slots, request):
    async with slots:
        reader, writer = await asyncio.open_connection('127.0.0.1', port)
        try:
            writer.write(request)
            await reader.readuntil(b'\r\n\r\n')  # the server never answers
        finally:
            writer.close()


async def _fetch_within(loop, deadline, port, slots, request, latenesses, fetching):
    awaited = _fetch(port, slots, request) if fetching else loop.create_future()
    try:
        await asyncio.wait_for(awaited, deadline - loop.time())
    except asyncio.TimeoutError:
        latenesses.append(loop.time() - deadline)


async def _fetch_all(loop, port, offsets, in_flight, request, check_set_up, fetching):
    slots = asyncio.Semaphore(in_flight)
    latenesses = []
    start = loop.time()
    waits = [_fetch_within(loop, start + offset, port, slots, request, latenesses, fetching)
             for offset in offsets]
    # Each wait_for starts its clock when its coroutine first runs: start them all now.
    tasks = [loop.create_task(wait) for wait in waits]
    await asyncio.sleep(0)
    check_set_up(loop.time() - start)
    await asyncio.gather(*tasks)
    return latenesses


def run_asyncio(port, offsets, in_flight, request, check_set_up, fetching=True):
    """The latenesses of `offsets` fetches (deadlines, seconds after the start);
    `check_set_up(seconds)` is told how long making them took. Not `fetching`, each waits
    on a Future that never resolves instead."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(_fetch_all(loop, port, offsets, in_flight, request,
                                                  check_set_up, fetching))
    finally:
        loop.close()
