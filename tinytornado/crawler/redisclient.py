"""A Redis client on tinytornado: RESP2 over one IOStream, pipelined, reconnecting.

Theory of operation. A `RedisClient` owns at most one connection. A command is written
as soon as it is issued, whoever issues it, so commands from many coroutines share the
socket without waiting for each other's replies (pipelining is the normal case, not a
mode); Redis answers one connection's commands in the order it received them, so a FIFO
of waiters (`_in_flight`) hands each reply to its command. `pipeline` packs many commands
into one write and collects their replies into one list.

When the connection drops (the server restarted, a network error, a reply that breaks
the protocol), every command in flight fails with `ConnectionError` and is NOT sent again:
it may or may not have been applied (the server may have run an INCR and died before
replying), and only the caller knows whether running it twice is safe. The client then
reconnects in the background, at once and then with exponential backoff (capped, with
jitter so that many clients do not hammer a restarting server in step). Commands issued
while it has no connection wait, in order, and go out first on the new one. The wait is
counted from when the client lost its server (or first tried to reach it), not from each
command: once the client has been without a connection for `wait_timeout` seconds (and
has tried to connect once at least, so that a wait of 0 says why), the commands waiting
fail with a ConnectionError that says for how long and why, and so does each command
issued until it connects again; so a caller that sends a failed command again does not
wait a second `wait_timeout`, and the message says the real wait. The
first failed attempt of an outage is logged (a warning: the server is unreachable, and
how long commands wait), and so is the connection made again after it. AUTH and SELECT (from the URL) run on every new connection
before those commands, then a PING: a server that has just restarted answers LOADING
until its dataset is read back (from the append-only file), and a connection counts as
made only once it answers, so no command meets that error.

Nothing the server sends can take unbounded memory: the replies are read within
`resp.ReplyLimits` (the `limits` argument), and a reply past one drops the connection like
any reply that breaks the protocol. Whatever else goes wrong while reading (a MemoryError,
a bug) drops the connection too, rather than leaving a client that says it is connected
and never reads again. A command whose Future was cancelled (its caller stopped waiting)
is not sent if it still waits for a connection, and its reply, if it was sent, is read
and dropped.

Lua scripts (`register_script`) run by EVALSHA; the first NOSCRIPT (a new server, a
restart without persistence of the script cache, SCRIPT FLUSH) is answered by one EVAL,
which also loads the script for the next calls.

The crawl's shared work store (`redisstore`) is built on it.
"""
from __future__ import absolute_import, division, print_function

import collections
import hashlib
import itertools
import random

from six.moves.urllib.parse import unquote, urlsplit

from tinytornado import gen
from tinytornado._compat import binary_type
from tinytornado.concurrent import CancelledError, Future
from tinytornado.ioloop import IOLoop
from tinytornado.iostream import StreamClosedError
from tinytornado.log import gen_log
from tinytornado.tcpclient import TCPClient

from .resp import (ProtocolError, ReplyError, ReplyLimits, ReplyTooLarge, new_reader,
                   pack_command, pack_commands)

__all__ = ['RedisClient', 'Script', 'RedisAddress', 'parse_url', 'backoff_delay',
           'ConnectionError', 'ReplyError', 'ProtocolError', 'ReplyLimits', 'ReplyTooLarge',
           'DEFAULT_URL']

DEFAULT_URL = 'redis://127.0.0.1:6379/0'

_READ_CHUNK = 65536

# The client's states; a connection exists only in CONNECTED.
IDLE = 'idle'  # no command yet: nothing asked for a connection
CONNECTING = 'connecting'  # connecting or waiting to retry; commands are queued
CONNECTED = 'connected'
CLOSED = 'closed'


class ConnectionError(IOError):
    """The client has no connection to Redis for a command: it was in flight when the
    connection dropped (it may or may not have been applied), or no connection could be
    made within the wait, or the client is closed. The message says which."""


RedisAddress = collections.namedtuple('RedisAddress', 'host port db username password')


def parse_url(url):
    """``redis://[[username]:password@]host[:port][/db]`` -> `RedisAddress`.

    The port defaults to 6379 and the database to 0; the password and username are
    percent-decoded. Anything else (another scheme, a query) is a ValueError.
    """
    parts = urlsplit(url)
    if parts.scheme != 'redis' or not parts.hostname or parts.query or parts.fragment:
        raise ValueError('not a redis://[:password@]host[:port][/db] URL: %r' % (url,))
    path = parts.path.strip('/')
    if path and not path.isdigit():
        raise ValueError('the database in %r must be a number' % (url,))
    password = unquote(parts.password) if parts.password is not None else None
    username = unquote(parts.username) if parts.username else None
    return RedisAddress(parts.hostname, parts.port or 6379, int(path or 0), username, password)


def backoff_delay(failures, base, cap, rng=random):
    """Seconds to wait after `failures` (>= 0) failed attempts in a row: `base` doubled at
    each failure up to `cap`, then a random point in its upper half ("equal jitter"), so
    that clients that lost the same server spread out but none retries much sooner."""
    delay = min(cap, base * 2 ** min(failures, 62))
    return rng.uniform(delay / 2, delay)


class _Reply(object):
    """The waiter of one command: its reply resolves `future` (an error reply fails it)."""
    __slots__ = ('future',)

    def __init__(self):
        self.future = Future()

    def deliver(self, reply):
        if self.future.done():
            return  # cancelled by its caller: the reply is dropped
        if isinstance(reply, ReplyError):
            self.future.set_exception(reply)
        else:
            self.future.set_result(reply)

    def fail(self, error):
        _fail(self.future, error)


class _Batch(object):
    """The waiter of a `pipeline`: its `count` replies resolve `future` as one list."""
    __slots__ = ('future', 'count', 'replies', 'raise_on_error')

    def __init__(self, count, raise_on_error):
        self.future = Future()
        self.count = count
        self.replies = []
        self.raise_on_error = raise_on_error

    def deliver(self, reply):
        self.replies.append(reply)
        if len(self.replies) < self.count or self.future.done():
            return
        errors = [r for r in self.replies if isinstance(r, ReplyError)]
        if errors and self.raise_on_error:
            self.future.set_exception(errors[0])
        else:
            self.future.set_result(self.replies)

    def fail(self, error):
        _fail(self.future, error)


def _fail(future, error):
    if not future.done():  # else cancelled by its caller, who no longer waits
        future.set_exception(error)


class RedisClient(object):
    """A connection to one Redis server, made when the first command needs it.

    Args:
        url: ``redis://[[username]:password@]host[:port][/db]`` (see `parse_url`).
        connect_timeout: seconds for one attempt: TCP connect, AUTH and SELECT.
        wait_timeout: the most seconds commands wait for a connection, counted from when
            the server was lost (see the module docstring).
        backoff_base, backoff_max: the first and the largest pause between attempts.
        reader_class: the RESP parser (default: `resp.Reader`, hiredis's where installed).
        limits: the `resp.ReplyLimits` of a reply (default: `ReplyLimits()`'s).
    """

    def __init__(self, url=DEFAULT_URL, connect_timeout=5.0, wait_timeout=10.0,
                 backoff_base=0.05, backoff_max=5.0, reader_class=None, limits=None):
        self.url = url
        self.address = parse_url(url)
        self.connect_timeout = connect_timeout
        self.wait_timeout = wait_timeout
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.reader_class = reader_class
        self.limits = limits or ReplyLimits()
        self.io_loop = IOLoop.current()
        self.state = IDLE
        self.connections_made = 0
        self.connect_failures = 0  # failed attempts since the connection was lost
        self.last_error = None  # why the last connection attempt failed or was lost
        self.unreachable_since = None  # when the client began to need a connection
        self._said_unreachable = False  # the outage was logged: log its end too
        self._attempt_failed_once = False  # in this outage: commands may fail from then
        self._tcp_client = TCPClient()
        self._stream = None
        self._reading = None  # the read the reply loop waits for
        self._in_flight = collections.deque()  # waiters of the commands sent, in order
        # (deadline, data, waiter, count of commands) awaiting a connection
        self._queued = collections.deque()
        self._queue_timeout = None
        self._pause_future = self._pause_timeout = None

    def __repr__(self):
        return '<RedisClient %s %s>' % (self.url, self.state)

    def execute(self, *args):
        """Send one command; a Future of its reply: bytes, int, a list, or None for nil.

        Raises (through the Future):
            ReplyError: the server answered with an error (its message in ``args[0]``).
            ConnectionError: see the class; never retried here.
            TypeError: (at once) an argument that is not bytes, text, int or float.
        """
        waiter = _Reply()
        self._send(pack_command(args), waiter, 1)
        return waiter.future

    def pipeline(self, commands, raise_on_error=True):
        """Send `commands` (sequences of arguments) in one write; a Future of the list
        of their replies, in order. All the commands run even if one fails; then with
        `raise_on_error` the Future fails with the first ReplyError, else the list holds
        the ReplyError instances in place of replies."""
        commands = list(commands)
        waiter = _Batch(len(commands), raise_on_error)
        if commands:
            self._send(pack_commands(commands), waiter, len(commands))
        else:
            waiter.future.set_result([])
        return waiter.future

    def register_script(self, lua):
        """A `Script` running `lua` (text or bytes) on this client."""
        return Script(self, lua)

    def close(self):
        """Drop the connection and stop reconnecting; commands in flight or waiting fail
        with ConnectionError, and so does every later one. Harmless if already closed."""
        if self.state is CLOSED:
            return
        self.state = CLOSED
        error = self._closed_error()
        stream, self._stream = self._stream, None
        if stream is not None:
            # Cancelled, not failed by the close: the loop may stop with the client, and
            # a failure nobody retrieves would be logged.
            if self._reading is not None:
                self._reading.cancel()
            stream.close()
        self._fail_in_flight(error)
        self._fail_queued(error)
        self._end_pause()
        self._tcp_client.close()

    # -- sending ---------------------------------------------------------------------

    def _send(self, data, waiter, count):
        """Write `data`, `count` commands whose replies go to `waiter`, or queue it."""
        if self.state is CONNECTED:
            try:
                self._stream.write(data)
            except StreamClosedError as e:
                # Not sent, so safe to send on the next connection: queue it.
                self._connection_lost(self._stream, e)
            else:
                _expect(self._in_flight, waiter, count)
                return
        if self.state is CLOSED:
            waiter.fail(self._closed_error())
            return
        self._queue(data, waiter, count)

    def _closed_error(self):
        return ConnectionError('the client of %s is closed' % (self.url,))

    def _queue(self, data, waiter, count):
        if self.state is IDLE:
            self._start_connecting()
        deadline = self.unreachable_since + self.wait_timeout
        self._queued.append((deadline, data, waiter, count))
        if self._queue_timeout is None:
            self._queue_timeout = self.io_loop.call_at(deadline, self._expire_queued)

    def _expire_queued(self):
        """Fail the queued commands whose wait is over; watch for the next one's."""
        self._queue_timeout = None
        if not self._attempt_failed_once:
            return  # a wait of 0 still tries once: _attempt_failed comes back here
        now = self.io_loop.time()
        queued = self._queued
        if queued and queued[0][0] <= now:
            error = ConnectionError('no connection to %s within %gs (none for %.1fs): %s' % (
                self.url, self.wait_timeout, now - self.unreachable_since,
                _error_text(self.last_error) if self.last_error else 'still connecting'))
            while queued and queued[0][0] <= now:
                queued.popleft()[2].fail(error)
        if queued:
            self._queue_timeout = self.io_loop.call_at(queued[0][0], self._expire_queued)

    def _send_queued(self):
        """Write what waited for this connection, in one write, in the order issued."""
        queued, self._queued = self._queued, collections.deque()
        self._cancel_queue_timeout()
        # Not those cancelled meanwhile: their callers no longer wait for them.
        queued = [entry for entry in queued if not entry[2].future.done()]
        if queued:
            self._stream.write(b''.join([entry[1] for entry in queued]))
            for _, _, waiter, count in queued:
                _expect(self._in_flight, waiter, count)

    def _fail_queued(self, error):
        queued, self._queued = self._queued, collections.deque()
        self._cancel_queue_timeout()
        for entry in queued:
            entry[2].fail(error)

    def _cancel_queue_timeout(self):
        if self._queue_timeout is not None:
            self.io_loop.remove_timeout(self._queue_timeout)
            self._queue_timeout = None

    def _fail_in_flight(self, error):
        in_flight, self._in_flight = self._in_flight, collections.deque()
        for waiter in in_flight:
            if not waiter.future.done():  # a pipeline's waiter is there once per command
                waiter.fail(error)

    # -- the connection ----------------------------------------------------------------

    def _start_connecting(self):
        self.state = CONNECTING
        self.unreachable_since = self.io_loop.time()
        self._attempt_failed_once = False
        self.io_loop.spawn_callback(self._connect_until_connected)

    @gen.coroutine
    def _connect_until_connected(self):
        self.connect_failures = 0
        while self.state is CONNECTING:
            try:
                stream, reader = yield self._open()
            except Exception as e:  # whatever it is, the next attempt may not meet it
                if self.state is CONNECTING:  # else closed meanwhile
                    self._attempt_failed(e)
                    yield self._pause(backoff_delay(self.connect_failures, self.backoff_base,
                                                    self.backoff_max))
                    self.connect_failures += 1
                continue
            if self.state is not CONNECTING:
                stream.close()
                return
            self._connected(stream, reader)

    def _attempt_failed(self, error):
        self.last_error = error
        if not self._attempt_failed_once:
            self._attempt_failed_once = True
            self._cancel_queue_timeout()
            self._expire_queued()
        if not self.connect_failures and self.wait_timeout > 0:
            self._said_unreachable = True
            gen_log.warning('Redis at %s unreachable (%s); commands wait up to %g s for it',
                            self.url, _error_text(error), self.wait_timeout)
        if isinstance(error, (ReplyError, ProtocolError)):
            # AUTH or SELECT refused, or no RESP spoken: the URL is wrong for this server,
            # and waiting out the timeout would only hide it. Later commands still wait
            # for a retry, since the server's configuration may change.
            self._fail_queued(ConnectionError('%s refused the connection setup: %s: %s' % (
                self.url, type(error).__name__, error)))

    @gen.coroutine
    def _open(self):
        """A new stream with AUTH, SELECT and PING done, and the reader of its replies."""
        address = self.address
        stream = yield self._tcp_client.connect(address.host, address.port,
                                                timeout=self.connect_timeout)
        stream.set_nodelay(True)
        reader = new_reader(self.reader_class, self.limits)
        setup = self._setup_commands()
        try:
            stream.write(pack_commands(setup))
            deadline = self.io_loop.time() + self.connect_timeout
            for command in setup:
                reply = yield gen.with_timeout(deadline, _read_reply(stream, reader))
                if isinstance(reply, ReplyError):
                    if reply.code == 'LOADING':  # not refused: not ready yet
                        raise ConnectionError('%s is loading its dataset' % self.url)
                    if command[0] != 'PING':  # PING's other errors (NOAUTH) are the
                        raise reply           # commands' to meet
        except Exception:
            stream.close()
            raise
        raise gen.Return((stream, reader))

    def _setup_commands(self):
        address = self.address
        commands = []
        if address.password is not None:
            commands.append(('AUTH', address.username, address.password)
                            if address.username else ('AUTH', address.password))
        if address.db:
            commands.append(('SELECT', address.db))
        commands.append(('PING',))
        return commands

    def _connected(self, stream, reader):
        self._stream = stream
        self.state = CONNECTED
        self.connections_made += 1
        if self._said_unreachable:
            self._said_unreachable = False
            gen_log.warning('Redis at %s reachable again, after %.1f s', self.url,
                            self.io_loop.time() - self.unreachable_since)
        self._send_queued()
        self.io_loop.spawn_callback(self._read_replies, stream, reader)

    @gen.coroutine
    def _read_replies(self, stream, reader):
        """Hand each reply on `stream` to the oldest waiter, until the stream fails."""
        in_flight = self._in_flight  # this connection's: a new one gets a new deque
        try:
            while True:
                self._reading = stream.read_bytes(_READ_CHUNK, partial=True)
                reader.feed((yield self._reading))
                reply = reader.gets()
                while reply is not False:
                    if not in_flight:
                        raise ProtocolError('a reply that no command waits for: %r'
                                            % (reply,))
                    in_flight.popleft().deliver(reply)
                    reply = reader.gets()
        except (CancelledError, Exception) as e:  # a MemoryError too: it cannot go on
            self._connection_lost(stream, e)

    def _connection_lost(self, stream, error):
        if stream is not self._stream:
            return  # an old connection, already dealt with
        stream.close()
        self._stream = None
        self.last_error = error
        self._fail_in_flight(ConnectionError(
            'the connection to %s was lost (%s): the command was sent and may or may not '
            'have been applied' % (self.url, _error_text(error))))
        self._start_connecting()

    def _pause(self, delay):
        """A Future resolved after `delay` seconds, or at once by `close`."""
        self._pause_future = Future()
        self._pause_timeout = self.io_loop.call_later(delay, self._end_pause)
        return self._pause_future

    def _end_pause(self):
        future, self._pause_future = self._pause_future, None
        if self._pause_timeout is not None:
            self.io_loop.remove_timeout(self._pause_timeout)
            self._pause_timeout = None
        if future is not None:
            future.set_result(None)


def _error_text(error):
    return '%s: %s' % (type(error).__name__, error)


def _expect(in_flight, waiter, count):
    """Add `waiter` to `in_flight` once for each of the `count` replies it waits for."""
    if count == 1:
        in_flight.append(waiter)
    else:
        in_flight.extend(itertools.repeat(waiter, count))


@gen.coroutine
def _read_reply(stream, reader):
    """The next reply on `stream`, read on its own (before the reply loop starts)."""
    reply = reader.gets()
    while reply is False:
        reader.feed((yield stream.read_bytes(_READ_CHUNK, partial=True)))
        reply = reader.gets()
    raise gen.Return(reply)


class Script(object):
    """A Lua script run by its SHA1 (EVALSHA), loaded by EVAL when the server lacks it.

    ``yield script(keys=[...], args=[...])`` -> the script's reply. Made by
    `RedisClient.register_script`.
    """

    def __init__(self, client, lua):
        self.client = client
        self.lua = lua if isinstance(lua, binary_type) else lua.encode('utf-8')
        self.sha = hashlib.sha1(self.lua).hexdigest()

    @gen.coroutine
    def __call__(self, keys=(), args=()):
        arguments = [len(keys)] + list(keys) + list(args)
        try:
            reply = yield self.client.execute('EVALSHA', self.sha, *arguments)
        except ReplyError as e:
            if e.code != 'NOSCRIPT':
                raise
            reply = yield self.client.execute('EVAL', self.lua, *arguments)
        raise gen.Return(reply)
