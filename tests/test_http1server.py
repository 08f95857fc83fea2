"""The sans-IO server protocol: bytes in (whole, byte by byte, hostile), events out;
response framing; and a differential test against h11 when it is installed."""
from __future__ import absolute_import, division, print_function

import random
import re

import pytest

from tinytornado._compat import native_str
from tinytornado._http1server import CONTINUE, HTTP1ServerProtocol, RequestError, RequestHead
from tinytornado.httputil import (
    NEED_DATA, PAUSED, BodyData, ConnectionClosed, EndOfMessage, HTTPHeaders, HTTPOutputError,
)

try:
    import h11
except ImportError:
    h11 = None
    NO_REFERENCE = 'h11 is not installed: no differential test'
else:
    # h11 before 0.16 takes any two bytes as the CRLF after a chunk's data (CVE-2025-43859)
    # and refuses whitespace after a chunk size: not a reference for the chunked framing.
    NO_REFERENCE = ('h11 %s is older than 0.16, whose chunked framing is the reference'
                    % h11.__version__)
    if tuple(int(part) for part in h11.__version__.split('.')[:2]) >= (0, 16):
        NO_REFERENCE = None


def events_of(data, split=None, **options):
    """The events a new protocol gives for `data` fed in pieces of `split` bytes (whole if
    None), then end of file: a list ending in ConnectionClosed or ('error', code), with
    BodyData joined into one bytes per message."""
    protocol = HTTP1ServerProtocol(**options)
    pieces = [data] if split is None else [data[i:i + split] for i in range(0, len(data), split)]
    pieces.append(b'')
    out = []
    try:
        for piece in pieces:
            protocol.receive_data(piece)
            while True:
                event = protocol.next_event()
                if event is NEED_DATA:
                    break
                if event is PAUSED:
                    protocol.send_response_head(200, None, HTTPHeaders({'Content-Length': '0'}))
                    protocol.end_body()
                    if not protocol.reusable:
                        out.append('no keep-alive')
                        return out
                    protocol.start_next_cycle()
                    continue
                if isinstance(event, BodyData):
                    if out and isinstance(out[-1], bytes):
                        out[-1] += event.data
                    else:
                        out.append(event.data)
                    continue
                out.append(_plain(event))
                if isinstance(event, ConnectionClosed):
                    return out
    except RequestError as e:
        out.append(('error', e.code))
    return out


def _plain(event):
    if isinstance(event, RequestHead):
        return ('head', event.method, event.target, event.version,
                list(event.headers.get_all()))
    if isinstance(event, EndOfMessage):
        return ('end', list(event.trailers.get_all()))
    return event


REQUESTS = [
    b'GET /a?b=c HTTP/1.1\r\nHost: example.com\r\nX-Two: 1\r\nX-Two: 2\r\n\r\n',
    b'POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world',
    b'POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n'
    b'5\r\nhello\r\n6;name=value\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n',
    b'GET / HTTP/1.0\r\n\r\n',
    b'GET / HTTP/1.1\r\nHost: h\r\nFolded: one\r\n  two\r\n\r\n',
]


@pytest.mark.parametrize('data', REQUESTS)
def test_byte_by_byte_gives_the_same_events_as_whole(data):
    whole = events_of(data + data)  # twice: keep-alive
    assert whole[-1] is not None and ('error', 400) not in whole
    assert events_of(data + data, split=1) == whole
    assert events_of(data + data, split=3) == whole


def test_events_of_a_chunked_request():
    assert events_of(REQUESTS[2]) == [
        ('head', 'POST', '/c', 'HTTP/1.1', [('Host', 'h'), ('Transfer-Encoding', 'chunked')]),
        b'hello world', ('end', [('X-Trailer', 'yes')]), ConnectionClosed()]


def test_folded_and_bare_lf_heads():
    assert events_of(REQUESTS[4])[0][4] == [('Host', 'h'), ('Folded', 'one two')]
    assert events_of(b'\r\n\nGET / HTTP/1.0\nA: 1\n\n')[0] == (
        'head', 'GET', '/', 'HTTP/1.0', [('A', '1')])
    # A bare CR is no line end.
    assert events_of(b'GET / HTTP/1.1\rA: 1\r\n\r\n') == [('error', 400)]


@pytest.mark.parametrize('data, code', [
    (b'GET / HTTP/1.1\r\nX: ' + b'a' * 200 + b'\r\n\r\n', 431),
    (b'GET / HTTP/1.1\r\nX: ' + b'a' * 200, 431),  # never ends: refused once too long
    (b'POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n', 400),
    (b'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n60\r\n' + b'a' * 96 +
     b'\r\n6\r\nabcdef\r\n0\r\n\r\n', 400),
    (b'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n' + b'0' * 200 + b'1\r\n', 400),
    (b'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: ' + b'a' * 200, 400),
    (b'GET / HTTP/1.1\r\nHost: a\r\n', None),  # cut short: no answer is due
    (b'POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nabc', None),
])
def test_limits_and_truncation(data, code):
    for split in (None, 1):
        events = events_of(data, split=split, max_header_size=128, max_body_size=100)
        assert events[-1] == ('error', code)


def test_too_many_header_lines():
    assert events_of(b'GET / HTTP/1.1\r\n' + b'A: 1\r\n' * 101 + b'\r\n') == [('error', 400)]
    assert events_of(b'GET / HTTP/1.1\r\n' + b'A: 1\r\n' * 100 + b'\r\n')[0][0] == 'head'


def test_a_closed_connection_between_requests_is_not_an_error():
    assert events_of(b'') == [ConnectionClosed()]
    assert events_of(b'\r\n') == [ConnectionClosed()]


def response_for(request, code=200, headers=None, body=b'', no_keep_alive=False):
    """(bytes written, reusable) for one request and its response."""
    protocol = HTTP1ServerProtocol(no_keep_alive=no_keep_alive)
    protocol.receive_data(request)
    assert isinstance(protocol.next_event(), RequestHead)
    while not isinstance(protocol.next_event(), EndOfMessage):
        pass
    out = protocol.send_response_head(code, None, HTTPHeaders(headers or {}))
    out += protocol.send_body_data(body) + protocol.end_body()
    return out, protocol.reusable


def test_response_framing():
    assert response_for(b'GET / HTTP/1.1\r\n\r\n', body=b'abc') == (
        b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n', True)
    assert response_for(b'GET / HTTP/1.1\r\n\r\n', headers={'Content-Length': '3'},
                        body=b'abc') == (b'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc',
                                         True)
    assert response_for(b'GET / HTTP/1.0\r\n\r\n', body=b'abc') == (
        b'HTTP/1.1 200 OK\r\n\r\nabc', False)
    assert response_for(b'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n',
                        headers={'Content-Length': '0'}) == (
        b'HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: Keep-Alive\r\n\r\n', True)
    assert response_for(b'GET / HTTP/1.1\r\nConnection: close\r\n\r\n', code=204) == (
        b'HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n', False)
    assert response_for(b'HEAD / HTTP/1.1\r\n\r\n')[0] == b'HTTP/1.1 200 OK\r\n\r\n'
    assert response_for(b'GET / HTTP/1.1\r\n\r\n', no_keep_alive=True,
                        headers={'Content-Length': '0'})[1] is False


def test_response_errors():
    with pytest.raises(HTTPOutputError):
        response_for(b'GET / HTTP/1.1\r\n\r\n', headers={'Content-Length': '2'}, body=b'abc')
    with pytest.raises(HTTPOutputError):
        response_for(b'GET / HTTP/1.1\r\n\r\n', headers={'Content-Length': '4'}, body=b'abc')
    with pytest.raises(HTTPOutputError):
        response_for(b'HEAD / HTTP/1.1\r\n\r\n', body=b'abc')
    for bad in ('a\r\nb', 'a\nb', 'a\rb'):
        with pytest.raises(ValueError):
            response_for(b'GET / HTTP/1.1\r\n\r\n', headers={'X': bad})
    protocol = HTTP1ServerProtocol()
    with pytest.raises(RuntimeError):  # no request yet
        protocol.send_response_head(200, 'OK', HTTPHeaders())


def test_continue_is_offered_once_and_not_after_a_response_began():
    protocol = HTTP1ServerProtocol()
    protocol.receive_data(b'PUT / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n')
    protocol.next_event()
    assert protocol.send_continue() == CONTINUE
    assert protocol.send_continue() == b''
    for head, offered in ((b'PUT / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n', b''),):
        protocol = HTTP1ServerProtocol()
        protocol.receive_data(head)
        protocol.next_event()
        assert protocol.send_continue() == offered
    protocol = HTTP1ServerProtocol()
    protocol.receive_data(b'PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n')
    protocol.next_event()
    protocol.send_response_head(413, None, HTTPHeaders())
    assert protocol.send_continue() == b''
    protocol.end_body()
    assert not protocol.reusable  # its body was never read


# -- differential: h11 -------------------------------------------------------------------

def h11_events_of(data):
    """What h11 (as a server) makes of `data` then end of file, in events_of's form, or
    ('error', 400) for anything it refuses."""
    connection = h11.Connection(h11.SERVER)
    out = []
    try:
        connection.receive_data(data)
        connection.receive_data(b'')
        while True:
            event = connection.next_event()
            if event is h11.PAUSED:
                connection.send(h11.Response(status_code=200, headers=[('Content-Length', '0')]))
                connection.send(h11.EndOfMessage())
                if connection.our_state is h11.MUST_CLOSE:
                    out.append('no keep-alive')
                    return out
                connection.start_next_cycle()
                continue
            if isinstance(event, h11.Request):
                out.append(('head', _text(event.method), _text(event.target),
                            'HTTP/' + _text(event.http_version), _h11_fields(event.headers)))
            elif isinstance(event, h11.Data):
                if out and isinstance(out[-1], bytes):
                    out[-1] += bytes(event.data)
                else:
                    out.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                out.append(('end', _h11_fields(event.headers)))
                if connection.their_state is h11.MUST_CLOSE:
                    out.append('no keep-alive')
                    return out
            elif isinstance(event, h11.ConnectionClosed):
                out.append(ConnectionClosed())
                return out
            else:
                raise AssertionError('unexpected h11 event %r' % (event,))
    except h11.RemoteProtocolError:
        out.append(('error', 400))
    return out


def _text(value):
    return native_str(bytes(value))


def _h11_fields(headers):
    return [(_text(name).lower(), _text(value)) for name, value in headers]


def _comparable(events):
    # h11 lower-cases names (we give Tornado's spelling) and joins repeated Content-Lengths
    # into one: compare names lower-cased, heads without Content-Length.
    plain = []
    for event in events:
        if isinstance(event, ConnectionClosed):
            pass
        elif isinstance(event, tuple) and event[0] == 'error':
            event = 'refused'  # h11 refuses a cut-short request as we do, answer or not
        elif isinstance(event, tuple) and event[0] == 'head':
            fields = [(name.lower(), value) for name, value in event[4]
                      if name.lower() != 'content-length']
            event = event[:4] + (fields,)
        elif isinstance(event, tuple) and event[0] == 'end':
            event = ('end', [(name.lower(), value) for name, value in event[1]])
        plain.append(event)
    if plain and plain[-1] == 'refused':
        # A message refused part way is never served, however far each parser got in it
        # (we refuse some sooner: a CR in a chunk extension): compare whole messages.
        ends = [i for i, event in enumerate(plain) if isinstance(event, tuple) and
                not isinstance(event, ConnectionClosed) and event[0] == 'end']
        plain = plain[:ends[-1] + 1 if ends else 0] + ['refused']
    return plain


def _differs_by_design(data, ours, theirs):
    """Requests h11 and this server read differently on purpose (see _http1server)."""
    for version, fields in _heads(ours):
        if version == 'HTTP/1.1' and 'host' not in fields:
            return True  # h11 requires Host in 1.1 requests; 5.1 does not
    for version, fields in _heads(theirs):
        if version not in ('HTTP/1.0', 'HTTP/1.1'):
            return True  # h11 takes HTTP/5.1; we refuse
        if 'transfer-encoding' in fields and 'content-length' in fields:
            return True  # h11 reads it as chunked; we refuse it (smuggling)
    return (data[:1] in (b'\r', b'\n') or  # leading blank lines: RFC 9112 2.2 skips them
            b'\n' in data.replace(b'\r\n', b'') or  # bare LF line ends, as 5.1 reads them
            _CONTROL_IN_EXTENSION.search(data.partition(b'\r\n\r\n')[2]))  # we refuse


def _heads(events):
    return [(event[3], dict((name.lower(), value) for name, value in event[4]))
            for event in events if isinstance(event, tuple) and
            not isinstance(event, ConnectionClosed) and event[0] == 'head']


# A chunk extension with a control character: refused here (as by the client), a
# request-smuggling vector where parsers disagree; h11 takes it.
_CONTROL_IN_EXTENSION = re.compile(
    b'(?m);[^\n]*?(?:[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n))')


def _mutations(seed_requests, count, rng):
    alphabet = bytearray(b'\r\n :;,\t\x00\x7f0aZ-5\xff')
    for _ in range(count):
        data = bytearray(rng.choice(seed_requests))
        for _ in range(rng.randint(1, 3)):
            position = rng.randrange(len(data))
            action = rng.randrange(3)
            if action == 0:
                data[position] = rng.choice(alphabet)
            elif action == 1:
                del data[position]
            else:
                data.insert(position, rng.choice(alphabet))
        yield bytes(data)


@pytest.mark.skipif(NO_REFERENCE is not None, reason=str(NO_REFERENCE))
def test_differential_against_h11():
    seeds = [r for r in REQUESTS if b'Host:' in r] + [
        b'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET /2 HTTP/1.1\r\n'
        b'Host: h\r\n\r\n',
        b'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n',
    ]
    rng = random.Random(30)
    compared = disagreements = 0
    for data in list(seeds) + list(_mutations(seeds, 3000, rng)):
        ours, theirs = events_of(data), h11_events_of(data)
        if _differs_by_design(data, ours, theirs):
            continue
        compared += 1
        ours, theirs = _comparable(ours), _comparable(theirs)
        # h11 gives a message's events before it refuses the next; so do we: compare all.
        if ours != theirs:
            disagreements += 1
            assert ours == theirs, data
    assert compared > 1000 and disagreements == 0


@pytest.mark.skipif(NO_REFERENCE is not None, reason=str(NO_REFERENCE))
def test_the_differential_test_sees_the_designed_differences():
    # So that a filter above hiding too much would show: each is one documented difference.
    cases = [
        b'GET / HTTP/1.1\r\n\r\n',
        b'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked'
        b'\r\n\r\n0\r\n\r\n',
        b'\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n',
        b'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n'
        b'1;\x01\r\na\r\n0\r\n\r\n',
    ]
    for data in cases:
        ours, theirs = events_of(data), h11_events_of(data)
        assert _comparable(ours) != _comparable(theirs)
        assert _differs_by_design(data, ours, theirs)


def test_a_response_ends_once_and_takes_nothing_after():
    protocol = HTTP1ServerProtocol()
    protocol.receive_data(b'GET / HTTP/1.1\r\n\r\n')
    protocol.next_event()
    protocol.send_response_head(200, 'OK', HTTPHeaders())
    assert protocol.end_body() == b'0\r\n\r\n'
    with pytest.raises(RuntimeError):
        protocol.end_body()
    with pytest.raises(RuntimeError):
        protocol.send_body_data(b'late')


def test_keep_alive_decisions_at_the_response():
    # Answered before its (empty) body was asked for: the connection stays.
    protocol = HTTP1ServerProtocol()
    protocol.receive_data(b'GET / HTTP/1.1\r\n\r\n')
    protocol.next_event()
    protocol.send_response_head(200, 'OK', HTTPHeaders({'Content-Length': '0'}))
    protocol.end_body()
    assert isinstance(protocol.next_event(), EndOfMessage) and protocol.reusable
    # The application's "Connection: close" is honoured.
    assert response_for(b'GET / HTTP/1.1\r\n\r\n', headers={'Connection': 'close',
                                                           'Content-Length': '0'}) == (
        b'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n', False)
