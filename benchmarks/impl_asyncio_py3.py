"""The workloads written the way asyncio code is written (async def / await), Python 3 only.

Runs on asyncio's own loop and, for the uvloop column, on uvloop's. Each method does the
same work as its twin in impl_tornado.py and returns the same result.
"""
import asyncio
import operator

import loop_workloads
from common import MESSAGE_SIZE, echo_payload, import_optional, loopback_listener

__all__ = ['AsyncioStyle']


class AsyncioStyle(loop_workloads.LoopWorkloads):
    """W1-W6 on one event loop made by `loop_factory`."""

    def __init__(self, loop_factory):
        self.loop = loop_factory()
        asyncio.set_event_loop(self.loop)

    def w1_return(self, calls):
        async def sub(value):
            return value

        return self.loop.run_until_complete(_call_many(sub, calls))

    def w1_moment(self, calls):
        async def sub(value):
            await asyncio.sleep(0)
            return value

        return self.loop.run_until_complete(_call_many(sub, calls))

    def w2_switches(self, coroutines, switches):
        async def worker():
            done = 0
            for _ in range(switches):
                await asyncio.sleep(0)
                done += 1
            return done

        async def main():
            results = await asyncio.gather(*[worker() for _ in range(coroutines)])
            return sum(results)

        return self.loop.run_until_complete(main())

    def loop_api(self):
        loop = self.loop

        def run(fn):
            loop.call_soon(fn)
            loop.run_forever()

        # methodcaller calls handle.cancel() from C, adding no Python frame to the
        # cancel that remove_timeout does not have either.
        return loop_workloads.LoopAPI(loop.call_later, operator.methodcaller('cancel'),
                                      loop.call_soon, loop.stop, run)

    def w5_echo(self, clients, messages):
        return self.loop.run_until_complete(_echo(clients, messages))

    def w6_crawl(self, root_url, workers):
        crawl = import_optional('crawl_500lines_py3').crawl
        return self.loop.run_until_complete(crawl(root_url, workers))


async def _call_many(sub, calls):
    total = 0
    for i in range(calls):
        total += await sub(i)
    return total


async def _echo_handler(reader, writer):
    try:
        while True:
            data = await reader.readexactly(MESSAGE_SIZE)
            writer.write(data)
            await writer.drain()
    except asyncio.IncompleteReadError:
        pass  # the client is done
    finally:
        writer.close()


async def _echo_client(port, client_id, messages):
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    payload = echo_payload(client_id)
    echoed = 0
    for _ in range(messages):
        writer.write(payload)
        await writer.drain()
        data = await reader.readexactly(len(payload))
        if data != payload:
            raise AssertionError('echo returned %r for %r' % (data, payload))
        echoed += 1
    writer.close()
    return echoed


async def _echo(clients, messages):
    listener = loopback_listener()
    server = await asyncio.start_server(_echo_handler, sock=listener)
    port = listener.getsockname()[1]
    try:
        echoed = await asyncio.gather(*[_echo_client(port, i, messages)
                                        for i in range(clients)])
    finally:
        server.close()
        await server.wait_closed()
    return sum(echoed)
