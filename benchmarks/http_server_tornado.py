"""The server http_server.py measures, written against Tornado's API: a hello-world
handler and a StaticFileHandler, on tinytornado or on Tornado (5.1.1 on 2.7, 6 on 3.x).

    python benchmarks/http_server_tornado.py tinytornado|tornado STATIC_DIR

One process, one loop, no debug, the access log off (a ``log_function`` that does
nothing). It listens on a free port of 127.0.0.1, prints
``PORT <n> <framework's version> <Python's version>`` and serves until it is killed.
"""
from __future__ import absolute_import, division, print_function

import importlib
import platform
import sys

__all__ = ['make_app', 'main']


def make_app(framework, static_dir):
    web = importlib.import_module(framework + '.web')

    class HelloHandler(web.RequestHandler):
        def get(self):
            self.write('Hello, world')

    return web.Application([
        (r'/', HelloHandler),
        (r'/static/(.*)', web.StaticFileHandler, {'path': static_dir}),
    ], log_function=lambda handler: None)


def main(argv):
    framework, static_dir = argv
    if framework not in ('tinytornado', 'tornado'):
        raise SystemExit('the framework is tinytornado or tornado, not %r' % framework)
    httpserver = importlib.import_module(framework + '.httpserver')
    ioloop = importlib.import_module(framework + '.ioloop')
    netutil = importlib.import_module(framework + '.netutil')
    sockets = netutil.bind_sockets(0, '127.0.0.1')
    server = httpserver.HTTPServer(make_app(framework, static_dir))
    server.add_sockets(sockets)
    print('PORT %d %s %s' % (sockets[0].getsockname()[1],
                             importlib.import_module(framework).version,
                             platform.python_version()))
    sys.stdout.flush()
    ioloop.IOLoop.current().start()


if __name__ == '__main__':
    main(sys.argv[1:])
