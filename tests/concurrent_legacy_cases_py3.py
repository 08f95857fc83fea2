"""test_concurrent_legacy.py's cases that need ``async def`` (Python 3 only)."""
import tinytornado.platform.asyncio  # noqa: F401  (it teaches gen to run native coroutines)
from tinytornado._compat import futures
from tinytornado.concurrent import run_on_executor
from tinytornado.ioloop import IOLoop


class Answer(object):
    def __init__(self):
        self.executor = futures.ThreadPoolExecutor(1)

    @run_on_executor()
    def get(self):
        return 42


def test_await_run_on_executor_and_run_in_executor(io_loop):
    answer = Answer()

    async def both():
        return await answer.get(), await IOLoop.current().run_in_executor(None, int, '7')
    try:
        assert io_loop.run_sync(both) == (42, 7)
    finally:
        answer.executor.shutdown()
