"""``async def`` coroutines for test_gen_failure_cycles.py (Python 3 syntax, which 2.7
cannot parse): run under a Runner by gen.drive_awaitable when a coroutine yields them."""
from __future__ import absolute_import, division, print_function

from tinytornado import gen


async def fails_awaiting(token, make_waited):
    await make_waited()


async def catches_awaiting(token, make_waited):
    try:
        await make_waited()
    except ValueError:
        pass


def driven(native_coroutine):
    """The Future of `native_coroutine` run by gen.drive_awaitable, as a coroutine that
    yields it gets."""
    return gen.convert_yielded(native_coroutine)
