"""The HTTP/1.1 client connection's transition table (_http1state), and the protocol's use of
it: every move in the table is one that some response makes, and nothing else moves."""
from __future__ import absolute_import, division, print_function

import itertools

import pytest

from tinytornado import httputil
from tinytornado._http1state import (
    AWAITING_FINAL_HEAD, AWAITING_REQUEST, AWAITING_RESPONSE, CHUNK_DATA_READ, CHUNK_ENDED,
    CHUNK_STARTED, CHUNKED_HEAD, CLOSE_DELIMITED_HEAD, CLOSED, EVENTS, INFORMATIONAL_HEAD,
    LAST_CHUNK_STARTED, MESSAGE_ENDED, NEXT_CYCLE, PEER_CLOSED, READING_BODY, READING_CHUNK,
    READING_CHUNK_END, READING_CHUNK_SIZE, READING_TRAILERS, READING_UNTIL_CLOSE,
    RESPONSE_DONE, SEND_REQUEST, SIZED_HEAD, STATES, TRANSITIONS, ProtocolStateError,
)
from tinytornado.httputil import NEED_DATA, PAUSED, ConnectionClosed, HTTP1ClientProtocol

HOST = {'Host': 'example.com'}

# What each response makes the connection go through, (state, event, next state) in
# order, from the request to start_next_cycle (or to end of file).
SIZED = (b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok', [
    (AWAITING_REQUEST, SEND_REQUEST, AWAITING_RESPONSE),
    (AWAITING_RESPONSE, SIZED_HEAD, READING_BODY),
    (READING_BODY, MESSAGE_ENDED, RESPONSE_DONE),
    (RESPONSE_DONE, NEXT_CYCLE, AWAITING_REQUEST),
])
CHUNKED = (b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
           b'2\r\nok\r\n0\r\nX-Sum: 1\r\n\r\n', [
               (AWAITING_REQUEST, SEND_REQUEST, AWAITING_RESPONSE),
               (AWAITING_RESPONSE, CHUNKED_HEAD, READING_CHUNK_SIZE),
               (READING_CHUNK_SIZE, CHUNK_STARTED, READING_CHUNK),
               (READING_CHUNK, CHUNK_DATA_READ, READING_CHUNK_END),
               (READING_CHUNK_END, CHUNK_ENDED, READING_CHUNK_SIZE),
               (READING_CHUNK_SIZE, LAST_CHUNK_STARTED, READING_TRAILERS),
               (READING_TRAILERS, MESSAGE_ENDED, RESPONSE_DONE),
               (RESPONSE_DONE, NEXT_CYCLE, AWAITING_REQUEST),
           ])
# Two 1xx heads: the second one moves from AWAITING_FINAL_HEAD to itself.
INFORMATIONAL = (b'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n\r\n'
                 b'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', [
                     (AWAITING_REQUEST, SEND_REQUEST, AWAITING_RESPONSE),
                     (AWAITING_RESPONSE, INFORMATIONAL_HEAD, AWAITING_FINAL_HEAD),
                     (AWAITING_FINAL_HEAD, INFORMATIONAL_HEAD, AWAITING_FINAL_HEAD),
                     (AWAITING_FINAL_HEAD, SIZED_HEAD, READING_BODY),
                     (READING_BODY, MESSAGE_ENDED, RESPONSE_DONE),
                     (RESPONSE_DONE, NEXT_CYCLE, AWAITING_REQUEST),
                 ])
INFORMATIONAL_THEN_CHUNKED = (b'HTTP/1.1 100 Continue\r\n\r\n'
                              b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
                              b'0\r\n\r\n', [
                                  (AWAITING_REQUEST, SEND_REQUEST, AWAITING_RESPONSE),
                                  (AWAITING_RESPONSE, INFORMATIONAL_HEAD, AWAITING_FINAL_HEAD),
                                  (AWAITING_FINAL_HEAD, CHUNKED_HEAD, READING_CHUNK_SIZE),
                                  (READING_CHUNK_SIZE, LAST_CHUNK_STARTED, READING_TRAILERS),
                                  (READING_TRAILERS, MESSAGE_ENDED, RESPONSE_DONE),
                                  (RESPONSE_DONE, NEXT_CYCLE, AWAITING_REQUEST),
                              ])
# A close-delimited body ends the connection's use: no next cycle, end of file ends it.
UNTIL_CLOSE = (b'HTTP/1.1 200 OK\r\n\r\nall of it', [
    (AWAITING_REQUEST, SEND_REQUEST, AWAITING_RESPONSE),
    (AWAITING_RESPONSE, CLOSE_DELIMITED_HEAD, READING_UNTIL_CLOSE),
    (READING_UNTIL_CLOSE, MESSAGE_ENDED, RESPONSE_DONE),
])
INFORMATIONAL_THEN_UNTIL_CLOSE = (b'HTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.1 200 OK\r\n\r\nx', [
    (AWAITING_REQUEST, SEND_REQUEST, AWAITING_RESPONSE),
    (AWAITING_RESPONSE, INFORMATIONAL_HEAD, AWAITING_FINAL_HEAD),
    (AWAITING_FINAL_HEAD, CLOSE_DELIMITED_HEAD, READING_UNTIL_CLOSE),
    (READING_UNTIL_CLOSE, MESSAGE_ENDED, RESPONSE_DONE),
])
RESPONSES = {
    'sized': SIZED, 'chunked': CHUNKED, 'informational': INFORMATIONAL,
    'informational_then_chunked': INFORMATIONAL_THEN_CHUNKED, 'until_close': UNTIL_CLOSE,
    'informational_then_until_close': INFORMATIONAL_THEN_UNTIL_CLOSE,
}
# End of file on an idle connection.
PEER_CLOSED_MOVES = [(AWAITING_REQUEST, PEER_CLOSED, CLOSED)]


def table_moves():
    """The table as a set of (state, event, next state)."""
    return set((state, event, after) for state, row in TRANSITIONS.items()
               for event, after in row.items())


class RecordingRow(dict):
    """A row of the table that records each move applied through it."""

    def __init__(self, state, recorded):
        dict.__init__(self)
        self.state, self.recorded = state, recorded

    def __getitem__(self, event):
        after = TRANSITIONS[self.state][event]
        self.recorded.append((self.state, event, after))
        return after


@pytest.fixture
def moves(monkeypatch):
    """Every move the protocol makes, as (state, event, next state), in order."""
    recorded = []
    recording = dict((state, RecordingRow(state, recorded)) for state in TRANSITIONS)
    monkeypatch.setattr(httputil, 'TRANSITIONS', recording)
    return recorded


def run_cycle(response, eof=False):
    protocol = HTTP1ClientProtocol()
    protocol.send_request('GET', '/', HOST)
    for piece in [response[i:i + 1] for i in range(len(response))] + ([b''] if eof else []):
        protocol.receive_data(piece)  # byte by byte: a move must not depend on the split
        while protocol.next_event() not in (NEED_DATA, PAUSED):
            pass
    if protocol.reusable:
        protocol.start_next_cycle()
    return protocol


@pytest.mark.parametrize('name', sorted(RESPONSES))
def test_each_response_makes_the_moves_of_the_table(moves, name):
    response, expected = RESPONSES[name]
    run_cycle(response, eof=expected[-1][2] is not AWAITING_REQUEST)
    assert moves == expected


def test_end_of_file_on_an_idle_connection_closes_it(moves):
    protocol = HTTP1ClientProtocol()
    protocol.receive_data(b'')
    assert isinstance(protocol.next_event(), ConnectionClosed)
    assert isinstance(protocol.next_event(), ConnectionClosed)  # CLOSED reads no more
    assert moves == PEER_CLOSED_MOVES


def test_every_legal_transition_is_one_a_response_makes():
    made = set(itertools.chain(PEER_CLOSED_MOVES, *(moves for _, moves in RESPONSES.values())))
    assert made == table_moves()


@pytest.mark.parametrize('state, event, after', sorted(table_moves()))
def test_applying_each_legal_event_gives_its_next_state(state, event, after):
    made = [a for s, e, a in itertools.chain(PEER_CLOSED_MOVES, *(
        moves for _, moves in RESPONSES.values())) if (s, e) == (state, event)]
    assert TRANSITIONS[state][event] == after == made[0]


ILLEGAL = sorted(set(itertools.product(STATES, EVENTS)) -
                 set((state, event) for state, event, _ in table_moves()))


@pytest.mark.parametrize('state, event', ILLEGAL)
def test_an_illegal_transition_raises_a_protocol_state_error(state, event):
    with pytest.raises(ProtocolStateError) as raised:
        TRANSITIONS[state][event]
    message = str(raised.value)
    assert event in message and state in message
    allowed = ', '.join(sorted(TRANSITIONS[state])) or 'nothing'
    assert 'allowed there: %s' % allowed in message


def test_the_table_has_no_dead_end_but_closed_and_reaches_every_state():
    assert sorted(TRANSITIONS) == sorted(STATES)
    assert [state for state in STATES if not TRANSITIONS[state]] == [CLOSED]
    reached, todo = set(), [AWAITING_REQUEST]
    while todo:
        state = todo.pop()
        if state not in reached:
            reached.add(state)
            todo.extend(TRANSITIONS[state].values())
    assert reached == set(STATES)
    assert set(event for _, event, _ in table_moves()) == set(EVENTS)


def test_the_protocol_reads_in_every_state():
    assert sorted(httputil._READERS) == sorted(STATES)

