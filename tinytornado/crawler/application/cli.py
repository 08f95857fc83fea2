"""The crawler's command line: ``python -m tinytornado.crawler URL...`` (or ``tinycrawl``).

``--demo`` (the default when no URL is given) serves a generated site on 127.0.0.1 from the
same loop and crawls it, so the command works on a machine with no network. The text
report goes to stdout (to stderr with ``--output -``, whose lines take stdout), a progress
line to stderr when that is a terminal. Ctrl-C (or SIGTERM) stops the crawl cleanly and
still prints the report; with ``--state FILE`` the crawl can then go on with ``--resume``,
after a kill too: the ``--output`` of a resumed crawl is first mended from the journal
(by the Crawler, which owns its output file), so that it ends with one line per finished
URL. ``--resume`` takes the URLs and options that shape the crawl from the journal (a
demo crawl's site and port too, where its demo server is started again), and refuses
options that contradict them; it writes to the files the crawl wrote unless given others
(`crawloptions.RESUMED_PATHS`). The configuration is resolved once, by
`configuration.resolve`, for a crawl, ``--collect`` and ``--status`` alike.
``--redis URL --crawl-id NAME`` shares the crawl through Redis: the first process starts
it with its URLs and options, others join it (no URL needed), taking them the same way; a
process with no URL never starts a crawl: it waits up to ``--join-timeout`` for the crawl
to be started, then exits 2 naming the id.

A user's mistake (a bad number, regex, root URL or file option, options that contradict
each other) is one line on stderr and exit status 2, before the demo server starts or any
request is made (`usage`); so is a file, or stdout, that cannot be written later (a full
disk), after which the other files are still written. The exit status tells the crawl's
outcome (`EXIT_STATUSES`, shown by ``--help``); roots that all answered an error status
are exit 3, as if none answered, with each root's status on stderr.
"""
from __future__ import absolute_import, division, print_function

import argparse
import errno
import io
import json
import logging
import os
import signal
import socket
import sqlite3
import sys

from tinytornado import gen, httputil
from tinytornado.httpclient import AsyncHTTPClient
from tinytornado.ioloop import IOLoop

from .collect import EXIT_NO_REDIS, collect_interrupted, run_interruptibly, run_view
from ..configuration import resolve
from ..crawloptions import (COMMAND_LINE_JOURNALED, OPTIONS, RESUMED_PATHS,
                            ConfigurationError, OptionValues, add_arguments, option_mistake)
from ..demo.server import start_demo_server
from ..demo.website import Site
from ..engine import Crawler
from ..external import ExternalLinks, check_external, external_link_lines
from .linkcheck import (LinkChecker, broken_link_lines, malformed_link_lines,
                        sitemap_error_lines, unchecked_link_lines)
from ..outputs import CallbackOutput, OutputError
from ..redisclient import ConnectionError as RedisConnectionError
from .progress import ProgressLine
from .report import CrawlReport
from ..stats import failure_cause, url_report_line
from .usage import (COMMAND_LINE, STDOUT, UsageError, check_arguments, check_combinations,
                    check_files, option_names)
from .workers import PER_WORKER_FILES, run_workers, worker_argv

__all__ = ['main', 'build_parser', 'EXIT_BROKEN_LINKS', 'EXIT_USAGE', 'EXIT_NO_ROOT',
           'EXIT_INTERRUPTED', 'EXIT_BROKEN_PIPE', 'EXIT_STATUSES']

EXIT_BROKEN_LINKS = 1  # --link-check (or --check-external) found a broken link
EXIT_USAGE = 2  # argparse's own status for a mistake on the command line
EXIT_NO_ROOT = 3  # the crawl ended and not one URL got a response
EXIT_INTERRUPTED = 130  # the shell's code for a process stopped by SIGINT
EXIT_BROKEN_PIPE = 141  # and for one stopped by SIGPIPE

EXIT_STATUSES = """\
exit statuses:
  0    the crawl ended normally
  1    --link-check found a broken link in scope (a malformed one, a sitemap
       that could not be read), or --check-external a broken one out of scope
  2    a mistake on the command line (nothing was fetched), a file option
       (or stdout) that could not be written, or (--redis, no URL) no crawl
       --crawl-id was started within --join-timeout
  3    no root URL could be fetched at all, or each answered an error
       status such as 404 or 500 (stderr says why)
  4    the crawl's Redis could not be reached within --redis-wait (a worker,
       --collect or --status)
  5    --status: the Redis has no crawl --crawl-id (not started, or mistyped)
  130  interrupted by Ctrl-C or SIGTERM (the report is printed)
  141  stdout was closed before the report was written (as by `| head`)
"""


def build_parser():
    """The argparse parser of the command line."""
    parser = argparse.ArgumentParser(
        prog='tinycrawl', description='Crawl web sites from root URLs, politely.',
        epilog=EXIT_STATUSES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add = _adder(parser)
    add('roots', nargs='*', metavar='URL',
        help='root URLs (several allowed); with none, the demo site is crawled')
    add_arguments(add)
    return parser


def _adder(parser):
    """`parser.add_argument`, ending the help of an option that has a default with it."""
    def add(*names, **kwargs):
        default, text = kwargs.get('default'), kwargs.get('help')
        if (text and default is not None and not isinstance(default, bool)
                and '(default' not in text):
            kwargs['help'] = text + ' (default %(default)s)'
        return parser.add_argument(*names, **kwargs)
    return add


def _option_values(args):
    """{name: value} of every option in argparse's `args`."""
    return dict((option.name, getattr(args, option.name)) for option in OPTIONS
                if option.cli is not None)


def main(argv=None):
    """Run the command line; returns the exit status (see EXIT_STATUSES).

    A mistake on the command line exits (SystemExit) with EXIT_USAGE.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_combinations(args)
        mistake = option_mistake(OptionValues(_option_values(args)))
        if mistake is not None:
            raise UsageError(mistake.describe(COMMAND_LINE))
        check_arguments(args)
    except UsageError as e:
        _usage_error(parser, str(e))
    # Before anything that may wait for Redis: its client logs an outage.
    logging.basicConfig(level=logging.ERROR if args.quiet else logging.WARNING,
                        format='%(levelname)s %(name)s: %(message)s')
    own_loop = IOLoop.current(instance=False) is None  # or this process's caller's
    configuration = _resolve(parser, argv, args)
    options = configuration.options
    try:
        check_files(options)  # those a resume took back too
    except UsageError as e:
        configuration.close()
        _usage_error(parser, str(e))
    if options.workers:  # resolved here too: a mistake is said once, not by each worker
        configuration.close()
        if own_loop:  # made to resolve: the forked workers must not share its epoll fd
            IOLoop.current().close(all_fds=True)
        files = dict((name, getattr(args, name)) for name in PER_WORKER_FILES)
        argv = sys.argv[1:] if argv is None else argv
        return run_workers([worker_argv(argv, index, files)
                            for index in range(1, args.workers + 1)], main)
    if options.collect or options.status:
        try:
            return run_view(configuration, lambda text: _say(parser, text))
        except UsageError as e:
            _usage_error(parser, str(e))
    return _crawl_main(parser, configuration)


def _resolve(parser, argv, args):
    """The command line's `configuration.Configuration`, a resume's or a shared crawl's
    options taken back (a process with no URL joining a crawl waits for it up to
    --join-timeout); or exit, saying why."""
    given = _given_args(parser, argv, args)
    roots = given.pop('roots', [])
    joining = bool(args.redis) and not (roots or args.demo or args.collect or args.status)
    try:
        return run_interruptibly(lambda: resolve(
            given, roots, defaults=_option_values(args),
            join_timeout=args.join_timeout if joining else None,
            say=lambda text: _say(parser, text)))
    except (ValueError, sqlite3.Error) as e:
        _usage_error(parser, _refusal_message(e, args))
    except RedisConnectionError as e:
        parser.exit(EXIT_NO_REDIS, '%s: error: %s: %s\n' % (parser.prog, args.redis, e))
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM while waiting: nothing to report or undo
        if args.collect:  # said as once collecting: a collect of nothing yet
            parser.exit(EXIT_INTERRUPTED, '%s: %s\n' % (
                parser.prog, collect_interrupted(args.collect, 0)))
        parser.exit(EXIT_INTERRUPTED, '%s: interrupted while waiting for crawl %s in --redis '
                    '%s\n' % (parser.prog, args.crawl_id, args.redis))


def _crawl_main(parser, configuration):
    """Run the crawl of `configuration`; its exit status."""
    options = args = configuration.options
    if not configuration.roots and not options.resume:
        options.demo = True  # A first run with no URL works offline.
    if options.demo and not options.resume and 'max_rate' not in configuration.given:
        options.max_rate = 0.0  # the demo site is ours, on loopback: shown at full speed
    server = None
    if options.demo:
        server, options.demo_port = _start_demo_server(parser, configuration)
        configuration.roots = configuration.roots or [
            'http://127.0.0.1:%d/' % options.demo_port]
    links = report = None
    if options.report or options.link_check:
        links = LinkChecker(max_redirect=options.max_redirect)
        report = CrawlReport(links, title=_demo_title(options) if options.demo else None) if (
            options.report) else None
    root_answers = RootAnswers()
    external = ExternalLinks() if options.check_external else None
    options.keep_statistics = False  # streamed to --output; the report needs only totals
    options.outputs = _observers(options, root_answers, links, report)
    options.on_links = links.add_links if links is not None else None
    options.on_written_links = links.add_written_links if options.link_check else None
    options.on_external_links = external.add_links if external else None
    try:
        crawler = Crawler(configuration=configuration)
        _journal_command_line(crawler, options)
    except (ValueError, sqlite3.Error) as e:
        if server is not None:
            IOLoop.current().run_sync(server.close)  # _usage_error exits, in tests too.
        _usage_error(parser, _refusal_message(e, args))
    if not (args.quiet or args.no_progress):
        _say(parser, crawler.policy.describe())
    try:
        # The progress line counts a queue of this process: a shared one has none.
        statistics = _run(crawler, server, not args.no_progress and not args.redis and
                          sys.stderr.isatty())
    except RedisConnectionError as e:  # Redis gone for longer than --redis-wait
        _say(parser, 'error: --redis %s: %s' % (args.redis, e))
        return EXIT_NO_REDIS
    except OutputError as e:  # the crawl stopped: its journal, if any, can resume it
        if _is_broken_pipe(e.error):  # -v's stdout was closed early (`| head`)
            return _stdout_closed()
        _say(parser, 'error: %s' % e.describe(COMMAND_LINE))
        return EXIT_USAGE
    except IOError as e:
        if not _is_broken_pipe(e):
            raise
        return _stdout_closed()
    text, broken = _report_text(args, statistics, crawler, links, external)
    # Each file is written even when another, or stdout, could not be: the worst wins.
    statuses = [_print_report(parser, text, args.output == STDOUT),
                _write_files(parser, args, statistics, crawler, report)]
    failed = [status for status in statuses if status is not None]
    if failed:
        return max(failed)
    return _exit_status(parser, statistics, root_answers, broken)


def _report_text(args, statistics, crawler, links, external):
    """(the text report, the broken links it lists: in scope, malformed, unreadable
    sitemaps, out of scope). The check of the links out of scope runs here."""
    text = statistics.report()
    if args.demo:  # say first what was crawled: the numbers below are of a made-up site
        text = ('Crawled %s, served on %s by this process (no network used).\n'
                % (_demo_title(args), crawler.roots[0])) + text
    broken = []
    if args.link_check:
        in_scope = links.broken_links(crawler.roots)
        broken = in_scope + links.malformed + links.sitemap_errors
        text += '\n'.join(broken_link_lines(in_scope) + malformed_link_lines(links.malformed) +
                          sitemap_error_lines(links.sitemap_errors) +
                          unchecked_link_lines(links.unchecked)) + '\n'
    if external is not None and not statistics.interrupted:
        try:
            broken_external = _check_external(args, external)
        except KeyboardInterrupt:  # Ctrl-C: what the crawl found is still reported
            statistics.interrupted = True
            text += 'External links: the check was interrupted\n'
        else:
            broken += broken_external
            text += '\n'.join(external_link_lines(broken_external,
                                                  len(external.referrers))) + '\n'
    if args.demo:
        text += ('To check your own site: tinycrawl https://example.org/ --link-check '
                 '--report report.html\n')
    return text, broken


def _check_external(args, external):
    """The broken ones (ExternalLinks) among the crawl's links out of scope."""
    client = AsyncHTTPClient(force_instance=True, max_clients=args.max_tasks)
    try:
        return IOLoop.current().run_sync(lambda: check_external(
            external, client, 1.0 if args.delay is None else args.delay, args.max_tasks,
            user_agent=args.user_agent, connect_timeout=args.connect_timeout,
            request_timeout=args.request_timeout, max_redirects=args.max_redirect,
            validate_cert=not args.insecure, ca_certs=args.ca_file))
    finally:
        client.close()


def _is_broken_pipe(error):
    return getattr(error, 'errno', None) == errno.EPIPE


def _stdout_closed():
    """Send what Python still holds for stdout nowhere: nobody reads it, nor the error."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


def _print_report(parser, text, to_stderr):
    """Print the report on stdout (on stderr `to_stderr`, when stdout has the JSON lines);
    None, or the exit status of a stdout that could not take it."""
    if to_stderr:
        sys.stderr.write(text)
        return None
    try:
        sys.stdout.write(text)
        sys.stdout.flush()  # a full disk shows here, not at exit
    except IOError as e:  # OSError on Python 3
        if _is_broken_pipe(e):  # stdout was closed early (`| head`)
            return _stdout_closed()
        _say(parser, 'error: standard output: %s' % (e.strerror or e))
        _stdout_closed()
        return EXIT_USAGE
    return None


def _write_files(parser, args, statistics, crawler, report):
    """Write --summary and --report; None, or EXIT_USAGE once one line says why not."""
    status = None
    for name, path, write in (
            ('--summary', args.summary, lambda: _write_summary(path, statistics, crawler)),
            ('--report', args.report, lambda: report.write(path, statistics, crawler.roots))):
        if path is None:
            continue
        try:
            write()
        except (IOError, OSError) as e:  # checked before the crawl, but things change
            _say(parser, 'error: %s %s: %s' % (name, path, e.strerror or e))
            status = EXIT_USAGE
    return status


def _usage_error(parser, message):
    """Exit with EXIT_USAGE and one line: not argparse's usage lines, which bury it."""
    parser.exit(EXIT_USAGE, '%s: error: %s\n' % (parser.prog, message))


def _say(parser, message):
    sys.stderr.write('%s: %s\n' % (parser.prog, message))


def _refusal_message(error, args):
    """The line for an error the configuration, or `Crawler`, refused the options with."""
    if isinstance(error, sqlite3.Error):
        return '--state %s: cannot keep a crawl journal in it: %s' % (args.state, error)
    if isinstance(error, ConfigurationError):
        return error.describe(COMMAND_LINE)
    return option_names(str(error), _option_values(args))


class RootAnswers(object):
    """The roots' statistics that got no page (an error status, or no answer), and how
    many roots did: told of each URL as it finishes (a resume's roots, finished before,
    are in neither)."""

    def __init__(self):
        self.failed = []
        self.answered = 0

    def add_statistic(self, statistic):
        if statistic.depth != 0:
            return
        if statistic.status is None or statistic.status >= 400:
            self.failed.append(statistic)
        else:
            self.answered += 1


def _root_failure(statistic):
    if statistic.status is None:
        return '%s; tries: %d' % (failure_cause(statistic), statistic.tries)
    return 'answered %d %s' % (statistic.status, httputil.responses.get(statistic.status, ''))


def _exit_status(parser, statistics, root_answers, broken_links):
    if statistics.interrupted:
        return EXIT_INTERRUPTED
    if statistics.got_no_response():
        _say(parser, 'no root could be fetched:')
        for statistic in statistics.unanswered:
            sys.stderr.write('  %s: %s; tries: %d\n' % (
                statistic.url, failure_cause(statistic), statistic.tries))
        if statistics.urls > len(statistics.unanswered):
            sys.stderr.write('  and %d more\n' % (statistics.urls - len(statistics.unanswered)))
        return EXIT_NO_ROOT
    failed = sorted(root_answers.failed, key=lambda statistic: statistic.url)  # as finished
    if failed and not root_answers.answered:  # 404, 500: no site to crawl
        _say(parser, 'no root could be crawled:')
        for statistic in failed:
            sys.stderr.write('  %s: %s\n' % (statistic.url, _root_failure(statistic)))
        return EXIT_NO_ROOT
    for statistic in failed:  # the other roots were crawled
        _say(parser, 'warning: the root %s %s' % (statistic.url, _root_failure(statistic)))
    return EXIT_BROKEN_LINKS if broken_links else 0


def _given_args(parser, argv, args):
    """{name: value} of the options and URLs `argv` gives (not those left at defaults)."""
    given = argparse.Namespace(**dict.fromkeys(vars(args)))  # None: not on the command line
    parser.parse_args(argv, given)
    return dict((name, value) for name, value in vars(given).items()
                if value is not None and value != [])


def _start_demo_server(parser, configuration):
    """(server, port) of the demo site of `configuration`; exit 2 if its port is taken."""
    options = configuration.options
    try:
        return start_demo_server(Site(seed=options.demo_seed, pages=options.demo_pages),
                                 port=options.demo_port)
    except socket.error as e:
        configuration.close()
        _usage_error(parser, '%s: the demo server cannot listen on 127.0.0.1:%d (%s)' % (
            '--resume' if options.resume else '--demo-port', options.demo_port,
            e.strerror or e))


def _demo_title(args):
    return 'the demo site: %d generated pages (seed %d)' % (args.demo_pages, args.demo_seed)


def _journal_command_line(crawler, options):
    """Keep what a resume needs that the Crawler does not journal: the command line's
    journaled options (the demo site: a demo crawl's URLs carry its port, and a resume
    serves the same site on it again) and the files written, as absolute paths (a resume
    may start in another directory)."""
    if crawler.journal is not None:
        crawler.journal.set_meta('demo', dict(
            (name, getattr(options, name)) for name in COMMAND_LINE_JOURNALED)
            if options.demo else dict(demo=False))
        crawler.journal.set_meta('files', dict(
            (name, _journaled_path(getattr(options, name))) for name in RESUMED_PATHS
            if getattr(options, name) is not None))


def _journaled_path(path):
    return path if path == STDOUT else os.path.abspath(path)


def _observers(args, *collectors):
    """The outputs after the crawl's own: the printer of -v, then the collectors
    (LinkChecker, CrawlReport) that are not None."""
    calls = [_print_url_line] if args.verbose else []
    calls += [collector.add_statistic for collector in collectors if collector is not None]
    return [CallbackOutput(call) for call in calls]


def _print_url_line(statistic):
    try:
        print(url_report_line(statistic))
    except IOError as e:  # ends the crawl; OSError on Python 3
        raise OutputError('standard output', e)


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
