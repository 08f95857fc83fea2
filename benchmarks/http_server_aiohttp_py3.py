"""The server http_server.py measures, on aiohttp.web: the same hello-world handler and
static file as http_server_tornado.py.

    python benchmarks/http_server_aiohttp_py3.py STATIC_DIR

One process, asyncio's default loop, the access log off (``access_log=None``). It listens
on a free port of 127.0.0.1, prints
``PORT <n> <aiohttp's version> <Python's version>`` and serves until it is killed.
"""
from __future__ import absolute_import, division, print_function

import asyncio
import platform
import sys

import aiohttp
from aiohttp import web

__all__ = ['make_app', 'main']


async def hello(request):
    return web.Response(text='Hello, world')


def make_app(static_dir):
    app = web.Application()
    app.router.add_get('/', hello)
    app.router.add_static('/static/', static_dir)
    return app


async def serve(static_dir):
    runner = web.AppRunner(make_app(static_dir), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, '127.0.0.1', 0)
    await site.start()
    print('PORT %d %s %s' % (runner.addresses[0][1], aiohttp.__version__,
                             platform.python_version()))
    sys.stdout.flush()
    await asyncio.Event().wait()


def main(argv):
    static_dir, = argv
    asyncio.run(serve(static_dir))


if __name__ == '__main__':
    main(sys.argv[1:])
