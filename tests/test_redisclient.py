"""The Redis client against a real redis-server (tests/redis_server.py starts one per
test): replies of every kind, pipelining, Lua scripts, AUTH and SELECT from the URL, and a
server killed and restarted under the client."""
from __future__ import absolute_import, division, print_function

import datetime
import resource
import socket
import sys

import pytest

from tinytornado import gen
from tinytornado.crawler import redisclient
from tinytornado.crawler.resp import PythonReader, new_reader
from tinytornado.crawler.redisclient import (ConnectionError, RedisClient, ReplyError,
                                             backoff_delay, parse_url)
from tinytornado.ioloop import IOLoop
from tinytornado.iostream import StreamClosedError
from tinytornado.tcpserver import TCPServer
from tinytornado.testing import bind_unused_port

from test_layering import allowed_imports, internal_imports, layer_of
from test_resp import READERS


@pytest.fixture(params=READERS, ids=lambda reader_class: reader_class.__module__)
def reader_class(request):
    return request.param


@pytest.fixture
def client(redis_server, io_loop, reader_class):
    """A client of `redis_server`, on each reader; closed after the test."""
    client = RedisClient(redis_server.url(), reader_class=reader_class)
    yield client
    client.close()


@gen.coroutine
def wait_until(condition, timeout=10):
    """Poll `condition` every few milliseconds: the client's state, while a real server
    process is down, moves on real time."""
    deadline = IOLoop.current().time() + timeout
    while not condition():
        assert IOLoop.current().time() < deadline, 'condition not met within %ss' % timeout
        yield gen.sleep(0.005)


def test_the_client_imports_only_streams_and_below():
    module = 'tinytornado.crawler.redisclient'
    imported = set(layer_of(name) for _, name in
                   internal_imports(module, redisclient.__file__.replace('.pyc', '.py')))
    assert imported - allowed_imports('tcpclient') == {'crawler.resp'}  # its protocol


def test_parse_url():
    assert parse_url('redis://example.test') == ('example.test', 6379, 0, None, None)
    assert parse_url('redis://:s%40cret@127.0.0.1:7000/3') == (
        '127.0.0.1', 7000, 3, None, 's@cret')
    assert parse_url('redis://user:pw@h/') == ('h', 6379, 0, 'user', 'pw')
    for bad in ['http://h/0', 'redis:///0', 'redis://h/x', 'redis://h/0?db=1']:
        with pytest.raises(ValueError):
            parse_url(bad)


class _Bounds(object):
    """A `random` whose uniform(low, high) returns both bounds, to see the whole range."""

    def uniform(self, low, high):
        return (low, high)


def test_backoff_doubles_up_to_its_cap_with_jitter_in_the_upper_half():
    delays = [backoff_delay(failures, 0.1, 1.0, _Bounds()) for failures in range(6)]
    assert delays == [(0.05, 0.1), (0.1, 0.2), (0.2, 0.4), (0.4, 0.8), (0.5, 1.0),
                      (0.5, 1.0)]
    assert backoff_delay(10 ** 6, 0.1, 1.0, _Bounds()) == (0.5, 1.0)


def test_replies_of_every_kind(client):
    assert (yield client.execute('SET', 'key', u'caf\xe9')) == b'OK'
    assert (yield client.execute('GET', 'key')) == b'caf\xc3\xa9'
    assert (yield client.execute('GET', 'missing')) is None
    assert (yield client.execute('INCRBY', 'counter', -5)) == -5
    assert (yield client.execute('RPUSH', 'list', b'a', 2, 1.5)) == 3
    assert (yield client.execute('LRANGE', 'list', 0, -1)) == [b'a', b'2', b'1.5']
    assert (yield client.execute('LRANGE', 'missing', 0, -1)) == []
    assert (yield client.execute('PING')) == b'PONG'
    with pytest.raises(ReplyError) as info:
        yield client.execute('INCR', 'list')
    assert info.value.code == 'WRONGTYPE'
    with pytest.raises(ReplyError) as info:
        yield client.execute('NOSUCHCOMMAND')
    assert 'unknown command' in info.value.args[0]
    # An error reply fails its own command only: the connection goes on.
    assert (yield client.execute('EXISTS', 'key', 'list', 'missing')) == 2
    assert client.connections_made == 1


def test_a_multi_exec_transaction_returns_errors_in_place(client):
    replies = yield client.pipeline([('MULTI',), ('SET', 'a', 'x'), ('INCR', 'a'),
                                     ('GET', 'a'), ('EXEC',)])
    assert replies[:4] == [b'OK', b'QUEUED', b'QUEUED', b'QUEUED']
    ok, error, value = replies[4]
    assert (ok, value) == (b'OK', b'x')
    assert isinstance(error, ReplyError) and error.code == 'ERR'


def test_a_10_megabyte_value(client):
    value = bytes(bytearray(range(256))) * (10 * 4096)
    assert (yield client.execute('SET', 'big', value)) == b'OK'
    assert (yield client.execute('GET', 'big')) == value
    assert (yield client.execute('STRLEN', 'big')) == len(value)


def test_10k_commands_in_flight_get_their_own_replies(client):
    futures = [client.execute('INCR', 'n') for _ in range(10000)]
    assert (yield futures) == list(range(1, 10001))


def test_a_pipeline_of_10k_commands_in_one_write(client):
    sets = yield client.pipeline([('SET', 'k%d' % i, i) for i in range(10000)])
    assert sets == [b'OK'] * 10000
    gets = yield client.pipeline([('GET', 'k%d' % i) for i in range(10000)])
    assert gets == [str(i).encode('ascii') for i in range(10000)]
    assert (yield client.pipeline([])) == []


def test_a_failing_command_in_a_pipeline(client):
    commands = [('SET', 'text', 'a'), ('INCR', 'text'), ('SET', 'after', 'b'),
                ('HGET', 'text', 'f')]
    with pytest.raises(ReplyError) as info:
        yield client.pipeline(commands)
    assert 'not an integer' in info.value.args[0]  # the first error
    assert (yield client.execute('GET', 'after')) == b'b'  # the rest ran all the same
    replies = yield client.pipeline(commands, raise_on_error=False)
    assert [type(reply) for reply in replies] == [bytes, ReplyError, bytes, ReplyError]
    assert [reply.code for reply in replies[1::2]] == ['ERR', 'WRONGTYPE']


LUA_ECHO = "return {KEYS[1], ARGV[1], redis.call('INCR', KEYS[1])}"


def test_a_script_runs_by_sha_and_loads_itself_on_noscript(client):
    script = client.register_script(LUA_ECHO)
    assert (yield client.execute('SCRIPT', 'EXISTS', script.sha)) == [0]
    assert (yield script(keys=['calls'], args=['x'])) == [b'calls', b'x', 1]
    assert (yield client.execute('SCRIPT', 'EXISTS', script.sha)) == [1]
    assert (yield script(keys=['calls'], args=['y'])) == [b'calls', b'y', 2]
    yield client.execute('SCRIPT', 'FLUSH')
    assert (yield script(keys=['calls'], args=['z'])) == [b'calls', b'z', 3]
    assert (yield client.execute('SCRIPT', 'EXISTS', script.sha)) == [1]
    stats = yield client.execute('INFO', 'commandstats')
    # EVALSHA ran 3 times, 2 of them failed with NOSCRIPT; EVAL ran for those 2.
    assert b'cmdstat_evalsha:calls=3,' in stats and b'cmdstat_eval:calls=2,' in stats


def test_a_script_error_is_a_reply_error(client):
    script = client.register_script(b"return redis.error_reply('BAD thing')")
    with pytest.raises(ReplyError) as info:
        yield script()
    assert info.value.args[0].startswith('BAD thing')


def test_auth_and_select_come_from_the_url(start_redis_server, io_loop):
    server = start_redis_server(requirepass='s3cret')
    in_db3 = RedisClient(server.url(db=3, password='s3cret'))
    in_db0 = RedisClient(server.url(db=0, password='s3cret'))
    no_password = RedisClient(server.url(db=0))
    wrong_password = RedisClient(server.url(db=0, password='wrong'), wait_timeout=30)
    try:
        yield in_db3.execute('SET', 'where', 'three')
        assert (yield in_db3.execute('GET', 'where')) == b'three'
        assert (yield in_db0.execute('GET', 'where')) is None
        with pytest.raises(ReplyError) as info:
            yield no_password.execute('GET', 'where')
        assert info.value.code == 'NOAUTH'
        # Refused at once, not after the 30 seconds of wait_timeout.
        with pytest.raises(ConnectionError) as info:
            yield wrong_password.execute('GET', 'where')
        assert 'refused the connection setup' in str(info.value)
        assert 'WRONGPASS' in str(info.value) or 'invalid password' in str(info.value)
    finally:
        for client in (in_db3, in_db0, no_password, wrong_password):
            client.close()


@pytest.mark.gen_test(timeout=30)
def test_commands_wait_while_a_restarted_server_loads_its_dataset(start_redis_server,
                                                                  reader_class, io_loop):
    server = start_redis_server(**{'enable-debug-command': 'yes'})
    client = RedisClient(server.url(), backoff_base=0.01, backoff_max=0.05, wait_timeout=60,
                         reader_class=reader_class)
    try:
        yield client.execute('DEBUG', 'POPULATE', 1000000)
        yield client.execute('SAVE')  # dump.rdb, read back at the start
        server.stop()
        yield wait_until(lambda: client.state == redisclient.CONNECTING)
        # Started in a thread, so the client tries while the server listens but loads.
        restarted = io_loop.run_in_executor(None, server.start)
        assert (yield client.execute('DBSIZE')) == 1000000
        yield restarted
        assert 'is loading its dataset' in str(client.last_error)
    finally:
        client.close()


def test_a_server_killed_and_restarted_under_the_client(start_redis_server, reader_class):
    server = start_redis_server(appendonly='yes', appendfsync='always')
    client = RedisClient(server.url(), backoff_base=0.01, backoff_max=0.1, wait_timeout=20,
                         reader_class=reader_class)
    try:
        yield client.execute('SET', 'kept', 'before')
        # BLPOP blocks the connection, so these are surely still in flight at the kill.
        in_flight = [client.execute('BLPOP', 'nothing', 0),
                     client.pipeline([('INCR', 'n'), ('PING',)]),
                     client.execute('PING')]
        server.kill()
        for future in in_flight:
            with pytest.raises(ConnectionError) as info:
                yield future
            assert 'may or may not have been applied' in str(info.value)
        later = [client.execute('GET', 'kept'), client.execute('INCR', 'n'),
                 client.execute('INCR', 'n')]
        yield wait_until(lambda: client.connect_failures >= 3)
        assert client.state == redisclient.CONNECTING
        server.start()
        # Issued while down: sent in order on the new connection; the data persisted.
        assert (yield later) == [b'before', 1, 2]
        assert (yield client.execute('GET', 'n')) == b'2'
        assert client.connections_made == 2
    finally:
        client.close()


def test_commands_wait_for_a_connection_then_fail_saying_why(io_loop):
    # Bound but not listening: connecting is refused, and nobody else can take the port.
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    client = RedisClient('redis://127.0.0.1:%d/0' % sock.getsockname()[1],
                         wait_timeout=0.3, backoff_base=0.01, backoff_max=0.05)
    try:
        with pytest.raises(ConnectionError) as info:
            yield client.execute('PING')
        assert 'no connection to %s within 0.3s' % client.url in str(info.value)
        assert 'refused' in str(info.value).lower()
        assert client.connect_failures > 1
    finally:
        client.close()
        sock.close()


def test_close_fails_commands_in_flight_and_later_ones(client):
    yield client.execute('PING')
    blocked = client.execute('BLPOP', 'nothing', 0)
    client.close()
    with pytest.raises(ConnectionError) as info:
        yield blocked
    assert 'closed' in str(info.value)
    with pytest.raises(ConnectionError):
        yield client.execute('PING')
    client.close()  # harmless twice


class _GarbageServer(TCPServer):
    """Answers anything with bytes that are not RESP."""

    @gen.coroutine
    def handle_stream(self, stream, address):
        try:
            yield stream.read_bytes(1, partial=True)
            yield stream.write(b'?what\r\n')
            yield stream.read_until_close()
        except StreamClosedError:
            pass  # the client reconnects once and closes before sending anything


def test_a_protocol_error_drops_the_connection(io_loop, reader_class):
    sock, port = bind_unused_port()
    server = _GarbageServer()
    server.add_sockets([sock])
    client = RedisClient('redis://127.0.0.1:%d/0' % port, reader_class=reader_class,
                         backoff_base=10)
    try:
        with pytest.raises(ConnectionError) as info:
            yield client.execute('PING')
        assert 'ProtocolError' in str(info.value)
    finally:
        client.close()
        server.stop()


# -- a hostile server: nothing it sends can take unbounded memory --------------------------

_MiB = 1 << 20


class _HostileServer(TCPServer):
    """A fake Redis: PONG to PING; to the first other command of its first connection,
    `hostile` bytes, then `flood` MiB of b'x' (or until the client hangs up); +OK to
    every other command."""

    def __init__(self, hostile, flood=0):
        TCPServer.__init__(self)
        self.hostile = hostile
        self.flood = flood
        self.connections = 0
        self.handling = 0  # connections whose handler has not ended

    @gen.coroutine
    def stop_when_done(self):
        """Stop listening, and wait for the handlers to end (the client closed)."""
        self.stop()
        yield wait_until(lambda: not self.handling)

    @gen.coroutine
    def handle_stream(self, stream, address):
        self.connections += 1
        self.handling += 1
        first = self.connections == 1
        reader = new_reader(PythonReader)
        try:
            while True:
                reader.feed((yield stream.read_bytes(65536, partial=True)))
                command = reader.gets()
                while command is not False:
                    if command[0] == b'PING':
                        yield stream.write(b'+PONG\r\n')
                    elif first:
                        first = False
                        yield stream.write(self.hostile)
                        for _ in range(self.flood):
                            yield stream.write(b'x' * _MiB)
                    else:
                        yield stream.write(b'+OK\r\n')
                    command = reader.gets()
        except StreamClosedError:
            pass  # the client dropped the connection, as it should
        finally:
            self.handling -= 1


class _ExplodingReader(PythonReader):
    """Runs out of memory on the reply BOOM."""

    def gets(self):
        reply = PythonReader.gets(self)
        if reply == b'BOOM':
            raise MemoryError()
        return reply


# (what the server answers, MiB of b'x' after it, the words of the client's error) with
# the default limits: each of these took hundreds of MiB, or waited for ever.
HOSTILE_REPLIES = [
    (b'$100000000\r\n', 100, 'over max_bulk_length'),  # 300 MiB and more before
    (b'+', 8, 'over max_line_length'),  # a line that never ends
    (b'*100000000\r\n', 0, 'over max_array_length'),  # hiredis 1.1.0: 763 MiB at once
    (b'*1\r\n' * 100000 + b':1\r\n', 0, 'over max_depth'),  # 100,000 lists deep
]


def _peak_rss_mib():
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024.0 * 1024 if sys.platform == 'darwin' else 1024.0)


@pytest.mark.gen_test(timeout=60)
@pytest.mark.parametrize('hostile,flood,words', HOSTILE_REPLIES,
                         ids=['bulk', 'line', 'array', 'depth'])
def test_a_reply_past_a_limit_drops_the_connection_and_the_next_command_works(
        io_loop, reader_class, hostile, flood, words):
    sock, port = bind_unused_port()
    server = _HostileServer(hostile, flood)
    server.add_sockets([sock])
    client = RedisClient('redis://127.0.0.1:%d/0' % port, reader_class=reader_class)
    peak = _peak_rss_mib()
    try:
        with pytest.raises(ConnectionError) as info:
            yield gen.with_timeout(datetime.timedelta(seconds=20), client.execute('GET', 'k'))
        # hiredis 1.x (2.7's) refuses arrays nested over 7 deep itself.
        assert (('ReplyTooLarge' in str(info.value) and words in str(info.value))
                or 'depth > 7' in str(info.value))
        assert 'may or may not have been applied' in str(info.value)
        # The peak of the whole process: what the reply made it take beyond its past peak.
        assert _peak_rss_mib() - peak < 40
        assert (yield client.execute('GET', 'k')) == b'OK'  # on a new connection
        assert server.connections == 2 and client.connections_made == 2
    finally:
        client.close()
        yield server.stop_when_done()


@pytest.mark.gen_test(timeout=30)
def test_a_memory_error_while_reading_drops_the_connection(io_loop):
    sock, port = bind_unused_port()
    server = _HostileServer(b'+BOOM\r\n')
    server.add_sockets([sock])
    client = RedisClient('redis://127.0.0.1:%d/0' % port, reader_class=_ExplodingReader)
    try:
        with pytest.raises(ConnectionError) as info:
            yield gen.with_timeout(datetime.timedelta(seconds=10), client.execute('GET', 'k'))
        assert 'MemoryError' in str(info.value)
        # Not a client that says it is connected and never reads again.
        assert (yield gen.with_timeout(datetime.timedelta(seconds=10),
                                       client.execute('GET', 'k'))) == b'OK'
        assert client.connections_made == 2
    finally:
        client.close()
        yield server.stop_when_done()


# -- an outage: one wait, counted from the loss, said once -----------------------------------

@pytest.fixture
def refused_url():
    """A redis:// URL whose port is bound but not listening: connecting is refused."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    yield 'redis://127.0.0.1:%d/0' % sock.getsockname()[1]
    sock.close()


@pytest.mark.gen_test(timeout=30)
def test_the_wait_counts_from_the_outage_and_is_said_once(io_loop, refused_url, caplog):
    client = RedisClient(refused_url, wait_timeout=1.5, backoff_base=0.01, backoff_max=0.05)
    try:
        started = io_loop.time()
        with pytest.raises(ConnectionError) as info:
            yield client.execute('PING')
        assert io_loop.time() - started >= 1.5
        assert 'within 1.5s (none for 1.' in str(info.value)
        # Sent again, as redisstore does: it fails at once, saying the real wait.
        again = io_loop.time()
        with pytest.raises(ConnectionError) as info:
            yield client.execute('PING')
        assert io_loop.time() - again < 1.0
        waited = float(str(info.value).split('(none for ')[1].split('s)')[0])
        assert waited >= 1.5
        assert client.connect_failures > 3  # it went on trying
        said = [record.getMessage() for record in caplog.records
                if 'unreachable' in record.getMessage()]
        assert said == ['Redis at %s unreachable (%s); commands wait up to 1.5 s for it'
                        % (refused_url, said[0].split(' (')[1].split(');')[0])]
        assert 'Connection refused' in said[0] or 'refused' in said[0].lower()
    finally:
        client.close()


@pytest.mark.gen_test(timeout=30)
def test_a_command_cancelled_while_waiting_is_not_sent_and_close_is_clean(
        io_loop, redis_server):
    client = RedisClient(redis_server.url(), wait_timeout=30)
    try:
        waiting = client.execute('INCR', 'n')  # queued: the connection is not made yet
        waiting.cancel()
        assert (yield client.execute('INCR', 'n')) == 1  # the cancelled one never went
        redis_server.stop()
        yield wait_until(lambda: client.state == redisclient.CONNECTING)
        queued = client.pipeline([('PING',), ('PING',)])
        queued.cancel()  # a worker stopped by SIGTERM while Redis is down
    finally:
        client.close()  # was InvalidStateError, failing the cancelled Futures
    assert queued.cancelled()
