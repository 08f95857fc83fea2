"""Coroutines, timers and run_sync at work: run it and read the output beside the code.

    python examples/coroutines.py
"""
from __future__ import absolute_import, division, print_function

import time

from tinytornado import gen
from tinytornado.ioloop import IOLoop

started = time.time()


def say(message):
    print('%5.2fs  %s' % (time.time() - started, message))


@gen.coroutine
def brew(name, seconds):
    say('%s: started' % name)
    yield gen.sleep(seconds)          # Gives the loop to others while waiting.
    say('%s: ready' % name)
    raise gen.Return('%s (%.1fs)' % (name, seconds))


@gen.coroutine
def main():
    IOLoop.current().call_later(0.15, say, 'a timer fires between the coroutines')
    # Three coroutines run concurrently: the total is the longest, not the sum.
    drinks = yield [brew('tea', 0.3), brew('coffee', 0.2), brew('cocoa', 0.1)]
    say('all ready: %s' % ', '.join(drinks))
    try:
        yield gen.with_timeout(IOLoop.current().time() + 0.1, brew('slow soup', 5))
    except gen.TimeoutError:
        say('the soup timed out, and was cancelled')
    raise gen.Return(len(drinks))


if __name__ == '__main__':
    count = IOLoop.current().run_sync(main)
    say('run_sync returned %d' % count)
