"""redis_client.py's peer: a raw RESP client over asyncio streams, built as tinytornado's
is (commands written at once, a FIFO of futures for the replies, one reader task), with
the same parser class, so that the two differ by their framework only."""
import asyncio
import collections

from tinytornado.crawler.resp import new_reader, pack_command, pack_commands, ReplyError

__all__ = ['run_asyncio']


class _Batch(object):
    """A pipeline's replies, collected into one future as tinytornado's client does."""

    def __init__(self, count):
        self.future = asyncio.get_event_loop().create_future()
        self.count = count
        self.replies = []

    def deliver(self, reply):
        self.replies.append(reply)
        if len(self.replies) == self.count:
            self.future.set_result(self.replies)


class _Client(object):
    def __init__(self, reader, writer, parser):
        self._reader, self._writer, self._parser = reader, writer, parser
        self._waiting = collections.deque()
        self._task = asyncio.ensure_future(self._read_replies())

    def execute(self, *args):
        future = asyncio.get_event_loop().create_future()
        self._writer.write(pack_command(args))
        self._waiting.append(future)
        return future

    def pipeline(self, commands):
        batch = _Batch(len(commands))
        self._writer.write(pack_commands(commands))
        self._waiting.extend([batch] * len(commands))
        return batch.future

    async def _read_replies(self):
        while True:
            data = await self._reader.read(65536)
            if not data:
                return
            self._parser.feed(data)
            reply = self._parser.gets()
            while reply is not False:
                waiter = self._waiting.popleft()
                if type(waiter) is _Batch:
                    waiter.deliver(reply)
                elif isinstance(reply, ReplyError):
                    waiter.set_exception(reply)
                else:
                    waiter.set_result(reply)
                reply = self._parser.gets()

    def close(self):
        self._task.cancel()
        self._writer.close()


async def _one_at_a_time(client, count):
    for i in range(count // 2):
        await client.execute('SET', 'k%d' % (i % 1000), 'v')
        await client.execute('GET', 'k%d' % (i % 1000))


async def _in_flight(client, count, batch, commands):
    for start in range(0, count, batch):
        await asyncio.gather(*[client.execute(*command) for command in commands])


async def _pipelined(client, count, batch, commands):
    for start in range(0, count, batch):
        await client.pipeline(commands)


async def _workload(client, workload, count, batch, commands):
    if workload == 'one at a time':
        await _one_at_a_time(client, count)
    elif workload == 'in flight':
        await _in_flight(client, count, batch, commands)
    else:
        await _pipelined(client, count, batch, commands)


async def _timed(port, workload, count, batch, commands, reader_class, clock):
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    client = _Client(reader, writer, new_reader(reader_class))
    try:
        await client.execute('PING')
        start = clock()
        await _workload(client, workload, count, batch, commands)
        return clock() - start
    finally:
        client.close()


def run_asyncio(port, workload, count, batch, commands, reader_class, clock):
    """Seconds that `count` commands of `workload` took on asyncio."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(
            _timed(port, workload, count, batch, commands, reader_class, clock))
    finally:
        loop.close()
