"""The crawler's command line: ``python -m tinytornado.crawler URL... [options]`` (or ``tinycrawl``).

``--demo`` (the default when no URL is given) serves a generated site on 127.0.0.1 from the
same loop and crawls it, so the command works on a machine with no network. The text
report goes to stdout, a progress line to stderr when that is a terminal. Ctrl-C (or SIGTERM) stops the crawl cleanly and
still prints the report; with ``--state FILE`` the crawl can then go on with ``--resume``,
after a kill too: the ``--output`` of a resumed crawl is first mended from the journal
(`output.open_output`), so that it ends with one line per finished URL.
"""
from __future__ import absolute_import, division, print_function

import argparse
import errno
import io
import json
import logging
import os
import signal
import sys

from tinytornado import gen
from tinytornado.ioloop import IOLoop

from .demo import start_demo_server
from .demosite import Site
from .engine import DEFAULT_OPTIONS, Crawler
from .output import open_output
from .progress import ProgressLine
from .stats import url_report_line

__all__ = ['main', 'build_parser', 'EXIT_INTERRUPTED', 'EXIT_BROKEN_PIPE']

EXIT_INTERRUPTED = 130  # the shell's code for a process stopped by SIGINT
EXIT_BROKEN_PIPE = 141  # and for one stopped by SIGPIPE


def build_parser():
    """The argparse parser of the command line."""
    parser = argparse.ArgumentParser(
        prog='tinycrawl', description='Crawl web sites from root URLs, politely.')
    add = parser.add_argument
    add('roots', nargs='*', metavar='URL',
        help='root URLs (several allowed); with none, the demo site is crawled')
    add('--demo', action='store_true',
        help='serve a generated site on 127.0.0.1 and crawl it (no network needed); '
             'the default when no URL is given')
    add('--demo-pages', type=int, default=200, metavar='N', help='pages of the demo site')
    add('--demo-seed', type=int, default=0, metavar='N', help='seed of the demo site')
    add('--demo-port', type=int, default=0, metavar='PORT', help='port (default: any)')
    _add_crawl_options(parser)
    add('--output', metavar='FILE', help='write one JSON line per URL as it finishes')
    add('--summary', metavar='FILE', help='write a JSON summary at the end')
    add('--warc', metavar='FILE', help='archive every request and response, as on the wire, '
        'in a WARC/1.1 file, gzip per record (name it .warc.gz)')
    add('--state', metavar='FILE', help='keep a journal (SQLite) to resume from')
    add('--resume', action='store_true', help='go on with the crawl journaled in --state')
    add('-v', '--verbose', action='store_true', help='print a line per URL as it finishes')
    add('-q', '--quiet', action='store_true', help='only errors in the log')
    add('--no-progress', action='store_true', help='no progress line on stderr')
    return parser


def _add_crawl_options(parser):
    add = parser.add_argument
    defaults = DEFAULT_OPTIONS
    add('--max-tasks', type=int, default=defaults['max_tasks'], metavar='N',
        help='requests in flight at once (default %(default)s)')
    add('--max-redirect', type=int, default=defaults['max_redirect'], metavar='N',
        help='redirects followed from one link (default %(default)s)')
    add('--max-tries', type=int, default=defaults['max_tries'], metavar='N',
        help='tries of a URL that fails in a way that may pass (default %(default)s)')
    add('--lenient', dest='strict', action='store_false', default=defaults['strict'],
        help="also crawl the roots' registered domains and their subdomains")
    add('--strict', dest='strict', action='store_true',
        help="only crawl the roots' exact hosts (the default)")
    add('--include', action='append', metavar='REGEX', help='only crawl URLs matching one')
    add('--exclude', action='append', metavar='REGEX', help="don't crawl URLs matching one")
    add('--max-pages', type=int, metavar='N', help='take in at most N URLs')
    add('--max-depth', type=int, metavar='N', help='follow at most N links from a root')
    add('--max-per-host', type=int, metavar='N', help='requests in flight to one host')
    add('--delay', type=float, default=defaults['delay'], metavar='SECONDS',
        help='between two requests to one host (default %(default)s)')
    add('--no-robots', dest='obey_robots', action='store_false', help='ignore robots.txt')
    add('--user-agent', default=defaults['user_agent'], metavar='TEXT')
    add('--max-crawl-delay', type=float, default=defaults['max_crawl_delay'],
        metavar='SECONDS', help='cap on robots.txt Crawl-delay (default %(default)s)')
    add('--connect-timeout', type=float, default=defaults['connect_timeout'],
        metavar='SECONDS')
    add('--request-timeout', type=float, default=defaults['request_timeout'],
        metavar='SECONDS')
    add('--max-body-size', type=int, default=defaults['max_body_size'], metavar='BYTES')
    add('--skip-non-html', dest='download_non_html', action='store_false',
        help="don't download bodies that are not HTML past their headers")
    add('--frames', action='store_true', help='follow <frame> and <iframe> too')
    add('--hashed-seen', action='store_true',
        help='keep the seen set as 64-bit URL hashes (less memory)')


def _crawler_options(args):
    names = ('max_tasks', 'max_redirect', 'max_tries', 'strict', 'include', 'exclude',
             'max_pages', 'max_depth', 'max_per_host', 'delay', 'obey_robots', 'user_agent',
             'max_crawl_delay', 'connect_timeout', 'request_timeout', 'max_body_size',
             'download_non_html', 'frames', 'hashed_seen', 'state', 'resume')
    options = dict((name, getattr(args, name)) for name in names)
    options['keep_statistics'] = False  # streamed to --output; the report needs only totals
    options['warc'] = args.warc
    return options


def main(argv=None):
    """Run the command line; returns the exit status (0, or 130 if interrupted)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.resume and not args.state:
        parser.error('--resume needs --state FILE')
    if not args.roots and not args.resume:
        args.demo = True  # A first run with no URL works offline.

    logging.basicConfig(level=logging.ERROR if args.quiet else logging.WARNING,
                        format='%(levelname)s %(name)s: %(message)s')
    server = roots = None
    if args.demo:
        server, port = start_demo_server(Site(seed=args.demo_seed, pages=args.demo_pages),
                                         port=args.demo_port)
        roots = ['http://127.0.0.1:%d/' % port]
    try:
        crawler = Crawler(args.roots or roots, on_statistic=_printer(args),
                          **_crawler_options(args))
        # Opened only once the crawler has accepted its journal: a crawl refused (its
        # --state holds a crawl, and no --resume) must not empty the output.
        output = crawler.output = _open_output(args)
    except ValueError as e:
        if server is not None:
            IOLoop.current().run_sync(server.close)  # parser.error exits, in tests too.
        parser.error(str(e))
    try:
        statistics = _run(crawler, server, not args.no_progress and sys.stderr.isatty())
        sys.stdout.write(statistics.report())
    except IOError as e:
        if e.errno != errno.EPIPE:
            raise
        # stdout was closed early (`| head`): nobody reads the rest, nor Python's complaint.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    finally:
        if output is not None:
            output.close()
    if args.summary:
        _write_summary(args.summary, statistics, crawler)
    return EXIT_INTERRUPTED if statistics.interrupted else 0


def _open_output(args):
    if not args.output:
        return None
    try:
        return open_output(args.output, args.state if args.resume else None)
    except ValueError as e:
        raise ValueError('%s: %s' % (args.output, e))


def _printer(args):
    if not args.verbose:
        return None
    return lambda statistic: print(url_report_line(statistic))


@gen.coroutine
def _crawl(crawler, server):
    try:
        statistics = yield crawler.crawl()
    finally:
        if server is not None:
            yield server.close()
    raise gen.Return(statistics)


def _run(crawler, server, show_progress):
    """Run the crawl (and the demo server); SIGINT and SIGTERM stop it, and it returns."""
    io_loop = IOLoop.current()

    def on_signal(signum, frame):
        # A second Ctrl-C is the user insisting: Python's own KeyboardInterrupt.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        io_loop.add_callback_from_signal(crawler.stop)

    previous = dict((signum, signal.signal(signum, on_signal))
                    for signum in (signal.SIGINT, signal.SIGTERM))
    progress = ProgressLine(crawler, sys.stderr) if show_progress else None
    if progress is not None:
        progress.start()
    try:
        return io_loop.run_sync(lambda: _crawl(crawler, server))
    finally:
        if progress is not None:
            progress.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _write_summary(path, statistics, crawler):
    summary = statistics.summary()
    summary['roots'] = crawler.roots
    with io.open(path, 'w', encoding='utf-8') as out:
        out.write(json.dumps(summary, indent=2, sort_keys=True) + u'\n')


if __name__ == '__main__':
    sys.exit(main())
