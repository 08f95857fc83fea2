"""A body_producer written as a native coroutine (``async def``), as Tornado 5.1 takes it
(used by test_httpclient_body.py; Python 3 syntax, which 2.7 cannot parse)."""
from tinytornado import gen


async def native_producer(write):
    await write(b'1234')
    await gen.moment
    await write(b'5678')
