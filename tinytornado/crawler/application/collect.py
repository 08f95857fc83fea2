"""The whole crawl seen from any machine: ``--collect FILE`` drains the results of a crawl
on Redis into one file, ``--status`` shows its progress; both only read the shared store.

Collecting. Every worker's `done` adds the finished URL's record to the crawl's
``finished`` stream, exactly once per URL (redisstore.py). `Collector` pages through that
stream and appends one line per entry to FILE, the line ``--output`` writes for the URL
(`output.statistic_line`), until the crawl is over crawl-wide. Its position is kept beside
FILE, in ``FILE.position``: the id of the last entry whose line is in FILE and FILE's
size in bytes up to the end of that line. The position is replaced (a rename, atomic)
only after the lines it counts were written, so it never runs ahead of FILE; a run
killed at any instant and started again cuts FILE to the size the position names (the
lines after it, whole or torn, are written again from the stream) and goes on after its
entry: no line is skipped and none is written twice. The collector reads nothing of
FILE, so a resume costs nothing however long FILE is.

A FILE that exists without its position is not one a collect wrote: it is refused,
rather than appended to or emptied.

Redis unreachable. Both wait for it up to ``--redis-wait`` seconds (the client's
`wait_timeout`, counted from the loss: a Redis loading a large append-only file takes
minutes), saying so on stderr once per outage, then go on where they were; past the wait,
one line and `EXIT_NO_REDIS`. Ctrl-C or SIGTERM, waiting or not, ends them with 130 and a
line saying what was done (a collect goes on where it stopped when run again).
"""
from __future__ import absolute_import, division, print_function

import io
import json
import os
import signal

from tinytornado import gen
from tinytornado.ioloop import IOLoop

from ..output import statistic_line
from ..redisclient import ConnectionError
from ..redisstore import RedisWorkStore
from .usage import UsageError

__all__ = ['Collector', 'CollectError', 'position_path', 'status_lines', 'run_view',
           'collect_interrupted', 'run_interruptibly', 'POLL_INTERVAL', 'EXIT_NO_REDIS',
           'EXIT_NO_CRAWL', 'EXIT_INTERRUPTED']

POLL_INTERVAL = 0.5  # seconds between two looks at a running crawl's new results
EXIT_NO_REDIS = 4  # the crawl's Redis could not be reached within --redis-wait
EXIT_NO_CRAWL = 5  # --status: the Redis has no crawl of that id (not started, mistyped)
EXIT_INTERRUPTED = 130  # the shell's code for SIGINT

_PAGE = 1000  # stream entries read at once
_START = '0'  # the stream entry id before every entry


class CollectError(ValueError):
    """FILE (or its position) is not what a collect of this crawl left."""


def position_path(path):
    """Where the position of a collect into `path` is kept."""
    return path + '.position'


class Collector(object):
    """Appends a line per finished URL of the crawl in `store` (a `RedisWorkStore`) to
    the file at `path`, resuming where a collect into it stopped (see the module).

    Args:
        on_wait: called with a line of text once when the crawl has not started yet.
    """

    def __init__(self, store, path, poll_interval=POLL_INTERVAL, on_wait=None):
        self.store = store
        self.path = path
        self.poll_interval = poll_interval
        self.on_wait = on_wait
        self.entry_id, self.size = self._read_position()
        self._check_file()
        self.written = 0  # lines appended by this run

    @gen.coroutine
    def collect(self):
        """Collect until the crawl is over and every result is in the file; a Future of
        the number of lines this run appended."""
        self._check_file()  # again: things may have changed since
        self._prepare_file()
        with io.open(self.path, 'ab') as output:
            yield self._wait_for_start()
            while True:
                # Over first, then drained: whatever finished before "over" is in the
                # stream by then, since `done` adds the entry in the step that ends it.
                status = yield self.store.status()
                yield self._drain(output)
                if status['over']:
                    break
                yield gen.sleep(self.poll_interval)
        raise gen.Return(self.written)

    @gen.coroutine
    def _wait_for_start(self):
        said = False
        while True:
            status = yield self.store.status()
            if status['started'] is not None:
                return
            if not said and self.on_wait is not None:
                self.on_wait('waiting for crawl %s to start' % self.store.crawl_id)
                said = True
            yield gen.sleep(self.poll_interval)

    @gen.coroutine
    def _drain(self, output):
        """Append the lines of every entry after ours, a page at a time."""
        while True:
            records = yield self.store.finished_records(self.entry_id, _PAGE)
            if not records:
                return
            data = b''.join(statistic_line(json.loads(record)).encode('utf-8')
                            for _, _, record in records)
            output.write(data)
            output.flush()  # to the kernel, which a kill -9 of this process does not undo
            self._save_position(records[-1][0], self.size + len(data))
            self.written += len(records)

    # -- the position -------------------------------------------------------------------

    def _read_position(self):
        """(entry id, size) of the position file, or the start if there is none."""
        try:
            with io.open(position_path(self.path), 'r', encoding='utf-8') as f:
                position = json.load(f)
            return str(position['entry']), int(position['size'])
        except (IOError, OSError) as e:
            if os.path.exists(position_path(self.path)):
                raise CollectError('%s: %s' % (position_path(self.path), e.strerror or e))
            return _START, 0
        except (ValueError, KeyError, TypeError):
            raise CollectError('%s is not the position of a collect'
                               % position_path(self.path))

    def _check_file(self):
        """Refuse a FILE that is not what a collect into it left."""
        if not os.path.exists(self.path) or (not os.path.exists(position_path(self.path))
                                             and os.path.getsize(self.path) == 0):
            return
        if not os.path.exists(position_path(self.path)):
            raise CollectError('%s was not written by --collect (it has no %s): remove it '
                               'or collect into another file'
                               % (self.path, os.path.basename(position_path(self.path))))
        if os.path.getsize(self.path) < self.size:
            raise CollectError('%s is shorter than its position says (%d bytes): not the '
                               'file this collect wrote' % (self.path, self.size))

    def _prepare_file(self):
        """Cut FILE to the size its position names; a new FILE gets its position first."""
        if not os.path.exists(self.path) or not os.path.exists(position_path(self.path)):
            # A leftover position (FILE deleted since) counts for nothing: start over.
            self._save_position(_START, 0)
        with io.open(self.path, 'ab') as f:
            f.truncate(self.size)  # the lines after the position come again

    def _save_position(self, entry_id, size):
        path = position_path(self.path)
        with io.open(path + '.new', 'w', encoding='utf-8') as f:
            f.write(json.dumps({'entry': entry_id, 'size': size}, sort_keys=True) + u'\n')
        os.rename(path + '.new', path)  # atomic: a kill leaves the old or the new
        self.entry_id, self.size = entry_id, size


def status_lines(crawl_id, where, status):
    """The lines of ``--status``: `status` is `RedisWorkStore.status()`'s dict."""
    if status['started'] is None:
        return ['crawl %s at %s: not started (nothing of it in this Redis)' % (crawl_id, where)]
    elapsed = max(status['now'] - status['started'], 0.0)
    rate = status['finished'] / elapsed if elapsed > 0 else 0.0
    share = 100.0 * status['finished'] / status['seen'] if status['seen'] else 0.0
    return [
        'crawl %s at %s: %s' % (crawl_id, where, 'over' if status['over'] else 'running'),
        '  seen      %8d URLs on %d hosts' % (status['seen'], status['hosts']),
        '  finished  %8d (%.1f%% of those seen)' % (status['finished'], share),
        '  queued    %8d, and %d retries waiting for their time' % (status['queued'],
                                                                    status['delayed']),
        '  leased    %8d (being fetched by workers now)' % status['leased'],
        '  rate      %8.1f pages/s over the %.1f s since the start' % (rate, elapsed),
    ]


def run_view(configuration, say):
    """Run ``--collect`` or ``--status`` of a resolved `configuration.Configuration`
    (its Redis client, the process's one, is closed at the end); returns the exit
    status. `say` writes a line of news (to stderr).

    Raises:
        UsageError: a FILE --collect must not touch.
    """
    args, client = configuration.options, configuration.client
    store = RedisWorkStore(client, args.crawl_id, item_type=tuple)  # it never leases
    try:
        collector = None if args.status else Collector(store, args.collect, on_wait=say)
    except CollectError as e:
        client.close()
        raise UsageError(str(e))
    address = client.address
    where = 'redis://%s:%d/%d' % (address.host, address.port, address.db)
    try:
        if collector is None:
            status = run_interruptibly(store.status)
            print('\n'.join(status_lines(args.crawl_id, where, status)))
            if status['started'] is None:
                return EXIT_NO_CRAWL
        else:
            written = run_interruptibly(collector.collect)
            say('--collect %s: %d lines appended; the crawl is over' % (args.collect, written))
    except ConnectionError as e:
        say('error: %s: %s' % (where, e))
        return EXIT_NO_REDIS
    except KeyboardInterrupt:
        if collector is not None:
            say(collect_interrupted(args.collect, collector.written))
        return EXIT_INTERRUPTED
    finally:
        client.close()
    return 0


def collect_interrupted(path, written):
    """The line of a --collect into `path` interrupted after `written` lines."""
    return ('--collect %s: interrupted after %d lines appended; run it again to go on'
            % (path, written))


def run_interruptibly(function):
    """``IOLoop.current().run_sync(function)``, SIGTERM raising KeyboardInterrupt in it as
    Ctrl-C does: for what is safe to stop anywhere (reading a crawl, or its collect)."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return IOLoop.current().run_sync(function)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, frame):
    raise KeyboardInterrupt()
