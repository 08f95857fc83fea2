"""RESP2 without I/O: our PythonReader and hiredis's Reader (where it is installed) parse
the same cases the same way, fed whole, a byte at a time, in large pieces and with
trailing bytes; commands pack to the bytes Redis reads."""
from __future__ import absolute_import, division, print_function

import pytest

from tinytornado.crawler import resp
from tinytornado.crawler.resp import (ProtocolError, PythonReader, ReplyError, new_reader,
                                      pack_command, pack_commands)

READERS = [PythonReader] + ([resp.hiredis.Reader] if resp.hiredis is not None else [])

# (bytes on the wire, the replies they hold), for every kind of RESP2 reply.
CASES = [
    (b'+OK\r\n', [b'OK']),
    (b'-ERR unknown command\r\n', [ReplyError('ERR unknown command')]),
    (b':0\r\n:-42\r\n:9223372036854775807\r\n', [0, -42, 9223372036854775807]),
    (b'$5\r\nhello\r\n', [b'hello']),
    (b'$0\r\n\r\n', [b'']),
    (b'$-1\r\n', [None]),
    (b'$4\r\na\r\nb\r\n', [b'a\r\nb']),  # a bulk string holds any bytes, CRLF included
    (b'$3\r\n\x00\xff\x80\r\n', [b'\x00\xff\x80']),
    (b'*0\r\n', [[]]),
    (b'*-1\r\n', [None]),
    (b'*3\r\n$1\r\na\r\n:1\r\n$-1\r\n', [[b'a', 1, None]]),
    (b'*2\r\n*2\r\n:1\r\n*0\r\n-WRONGTYPE no\r\n+x\r\n',
     [[[1, []], ReplyError('WRONGTYPE no')], b'x']),
    (b'*1\r\n*1\r\n*1\r\n:7\r\n', [[[[7]]]]),
]


def comparable(value):
    """Replies with ReplyErrors turned into (class name, message), for ==."""
    if isinstance(value, list):
        return [comparable(item) for item in value]
    if isinstance(value, ReplyError):
        return ('ReplyError', value.args[0])
    return value


def read_all(reader, pieces, replies):
    """Feed `pieces` to `reader`, appending each reply to `replies` as it comes out."""
    for piece in pieces:
        reader.feed(piece)
        reply = reader.gets()
        while reply is not False:
            replies.append(reply)
            reply = reader.gets()


def parse(reader_class, pieces):
    replies = []
    read_all(new_reader(reader_class), pieces, replies)
    return replies


def splits(data):
    """`data` whole, a byte at a time, and in two pieces at every point."""
    yield [data]
    yield [data[i:i + 1] for i in range(len(data))]
    for cut in range(1, len(data)):
        yield [data[:cut], data[cut:]]


@pytest.mark.parametrize('reader_class', READERS)
@pytest.mark.parametrize('data,replies', CASES)
def test_readers_parse_every_kind_of_reply_however_it_is_split(reader_class, data, replies):
    for pieces in splits(data):
        assert comparable(parse(reader_class, pieces)) == comparable(replies), pieces


@pytest.mark.parametrize('reader_class', READERS)
def test_all_cases_back_to_back_with_a_partial_reply_left_over(reader_class):
    data = b''.join(wire for wire, _ in CASES)
    expected = [reply for _, replies in CASES for reply in replies]
    reader = new_reader(reader_class)
    reader.feed(data + b'*2\r\n:1\r\n$3\r\nab')
    replies = []
    reply = reader.gets()
    while reply is not False:
        replies.append(reply)
        reply = reader.gets()
    assert comparable(replies) == comparable(expected)
    reader.feed(b'c\r\n')
    assert reader.gets() == [1, b'abc']
    assert reader.gets() is False


@pytest.mark.parametrize('reader_class', READERS)
def test_a_large_bulk_string_in_many_pieces(reader_class):
    value = bytes(bytearray(range(256))) * 40000  # 10 MB
    data = ('$%d\r\n' % len(value)).encode('ascii') + value
    data += b'\r\n:1\r\n'
    pieces = [data[i:i + 65536] for i in range(0, len(data), 65536)]
    assert parse(reader_class, pieces) == [value, 1]


@pytest.mark.parametrize('reader_class', READERS)
def test_a_reply_error_is_returned_as_our_class_not_raised(reader_class):
    reader = new_reader(reader_class)
    reader.feed(b'-NOSCRIPT No matching script\r\n')
    error = reader.gets()
    assert type(error) is ReplyError
    assert error.code == 'NOSCRIPT'


@pytest.mark.parametrize('reader_class', READERS)
@pytest.mark.parametrize('data', [b'x\r\n', b'*-2\r\n', b'!3\r\nabc\r\n'])
def test_a_bad_type_or_length_is_a_protocol_error(reader_class, data):
    reader = new_reader(reader_class)
    reader.feed(data)
    with pytest.raises(ProtocolError):
        reader.gets()


# hiredis 1.x (2.7's) reads these leniently, as strtoll does: only ours is checked.
@pytest.mark.parametrize('data', [b':abc\r\n', b':1a\r\n', b':+1\r\n', b': 1\r\n', b':\r\n',
                                  b':-\r\n', b'$-2\r\n', b'$ 3\r\nabc\r\n', b':1_0\r\n',
                                  b'$3\r\nabcXY'])
def test_python_reader_refuses_malformed_numbers_and_framing(data):
    reader = new_reader(PythonReader)
    reader.feed(data)
    with pytest.raises(ProtocolError):
        reader.gets()


def test_reader_is_hiredis_where_installed():
    expected = resp.hiredis.Reader if resp.hiredis is not None else PythonReader
    assert resp.Reader is expected


def test_pack_command():
    assert pack_command(('SET', b'k\r\n', u'\xe9', 12, -3, 1.5)) == (
        b'*6\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$2\r\n\xc3\xa9\r\n$2\r\n12\r\n$2\r\n-3\r\n'
        b'$3\r\n1.5\r\n')
    assert pack_command(()) == b'*0\r\n'
    assert pack_commands([('PING',), ('GET', 'a')]) == (
        b'*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\na\r\n')


@pytest.mark.parametrize('argument', [None, True, object(), [b'a'], {b'a': 1}])
def test_pack_command_refuses_values_redis_would_get_as_their_repr(argument):
    with pytest.raises(TypeError) as info:
        pack_command(('SET', 'k', argument))
    assert 'bytes, text, int or float' in str(info.value)


# -- limits: a server cannot make a reader allocate or buffer without bound ---------------

SMALL = resp.ReplyLimits(max_bulk_length=10, max_array_length=3, max_depth=2,
                         max_line_length=16)

# (bytes past one of SMALL's limits, the words of the error naming it)
PAST_A_LIMIT = [
    (b'$11\r\n', 'max_bulk_length (10)'),
    (b'$1000000000000\r\n', 'max_bulk_length'),
    (b'*4\r\n', 'max_array_length (3)'),
    (b'*100000000\r\n', 'max_array_length'),
    (b'*1\r\n*1\r\n*1\r\n:1\r\n', 'max_depth (2)'),
    (b'+1234567890123456\r\n', 'max_line_length (16)'),
    (b'+12345678901234567', 'max_line_length (16)'),  # no CRLF yet: refused all the same
    (b'-' + b'e' * 100, 'max_line_length'),
]


def limited_replies(reader_class, pieces, limits=SMALL):
    """The replies read from `pieces` until the reader raises; (replies, the error)."""
    replies = []
    try:
        read_all(new_reader(reader_class, limits), pieces, replies)
    except ProtocolError as e:
        return replies, e
    return replies, None


@pytest.mark.parametrize('reader_class', READERS)
@pytest.mark.parametrize('data,words', PAST_A_LIMIT)
def test_a_reply_past_a_limit_is_refused_after_the_replies_before_it(reader_class, data,
                                                                     words):
    before = b'+OK\r\n*2\r\n$10\r\n0123456789\r\n*0\r\n'  # each at a limit, not past it
    for pieces in [[before + data], [before[:7], before[7:] + data[:2], data[2:]],
                   [before + data[:1]] + [data[i:i + 1] for i in range(1, len(data))]]:
        replies, error = limited_replies(reader_class, pieces)
        assert replies == [b'OK', [b'0123456789', []]], pieces
        assert type(error) is resp.ReplyTooLarge, pieces
        assert words in str(error)


@pytest.mark.parametrize('reader_class', READERS)
def test_the_default_limits_take_what_the_crawl_reads(reader_class):
    limits = resp.ReplyLimits()
    assert limits.max_bulk_length >= 64 << 20 and limits.max_array_length >= 1 << 20
    assert limits.max_depth >= 8 and limits.max_line_length >= 1 << 20
    page = b'*1000\r\n' + b'*2\r\n$15\r\n1700000000000-0\r\n*2\r\n$3\r\nurl\r\n$4\r\nhttp\r\n' * 1000
    replies, error = limited_replies(reader_class, [page], limits)
    assert error is None and len(replies[0]) == 1000
    _, error = limited_replies(reader_class, [b'*%d\r\n' % (limits.max_array_length + 1)],
                               limits)
    assert 'max_array_length' in str(error)


def test_the_python_reader_makes_room_for_a_bulk_string_once():
    reader = new_reader(PythonReader)
    reader.feed(b'$3000000\r\n' + b'x' * 65536)
    assert reader.gets() is False
    moved = reader._buffer.bytes_moved
    for _ in range(40):
        reader.feed(b'x' * 65536)
    reader.feed(b'x' * (3000000 - 41 * 65536) + b'\r\n')
    assert len(reader.gets()) == 3000000
    # Each byte copied in once and out once: no copying as a doubling buffer grows.
    assert reader._buffer.bytes_moved - moved <= 2 * 3000000 + 65536
