"""The states of an HTTP/1.1 client connection and the one table of moves between them.

A connection goes round a cycle: a request is sent, a response head is read (after any 1xx
heads), then its body in the framing the head chose, and once the response has ended the
connection may start the next cycle. While reading, the state names what the next bytes
must be, so httputil's protocol keeps one reader per state. Which event moves which state
where is written once, in `TRANSITIONS` (state -> {event: next state}), as h11 writes its
own. The protocol changes state only by applying an event to it,
``state = TRANSITIONS[state][event]``, and an event the table does not allow in the current
state is refused with `ProtocolStateError` instead of leaving the connection somewhere
undefined.

The events are named for what the protocol saw or did, not for the bytes: a reader fires
one once it has parsed enough to know it (a whole head, a whole chunk-size line...).
"""
from __future__ import absolute_import, division, print_function

__all__ = [
    'ProtocolStateError', 'TRANSITIONS', 'STATES', 'EVENTS',
    'AWAITING_REQUEST', 'AWAITING_RESPONSE', 'AWAITING_FINAL_HEAD', 'READING_BODY',
    'READING_CHUNK_SIZE', 'READING_CHUNK', 'READING_CHUNK_END', 'READING_TRAILERS',
    'READING_UNTIL_CLOSE', 'RESPONSE_DONE', 'CLOSED',
    'SEND_REQUEST', 'PEER_CLOSED', 'INFORMATIONAL_HEAD', 'SIZED_HEAD', 'CHUNKED_HEAD',
    'CLOSE_DELIMITED_HEAD', 'CHUNK_STARTED', 'LAST_CHUNK_STARTED', 'CHUNK_DATA_READ',
    'CHUNK_ENDED', 'MESSAGE_ENDED', 'NEXT_CYCLE',
]


class ProtocolStateError(RuntimeError):
    """An event the connection's state does not allow: a bug of the code that drives the
    protocol (or of the protocol), never the peer's fault, which is HTTPInputError."""


# -- States (strings, compared by identity: each is this module's one object) -------------
AWAITING_REQUEST = 'AWAITING_REQUEST'  # nothing sent since the connection opened or was reset
AWAITING_RESPONSE = 'AWAITING_RESPONSE'  # request sent, no head parsed yet
AWAITING_FINAL_HEAD = 'AWAITING_FINAL_HEAD'  # 1xx heads parsed; the final head comes next
READING_BODY = 'READING_BODY'  # the rest of a body of known length (maybe none)
READING_CHUNK_SIZE = 'READING_CHUNK_SIZE'  # a chunk-size line
READING_CHUNK = 'READING_CHUNK'  # the rest of a chunk's data
READING_CHUNK_END = 'READING_CHUNK_END'  # the CRLF after a chunk's data
READING_TRAILERS = 'READING_TRAILERS'  # the trailer block after the last chunk
READING_UNTIL_CLOSE = 'READING_UNTIL_CLOSE'  # a body that ends where the connection does
RESPONSE_DONE = 'RESPONSE_DONE'  # the response ended; next_event answers PAUSED
CLOSED = 'CLOSED'  # end of file while no response was in progress: the cycle is over

STATES = (
    AWAITING_REQUEST, AWAITING_RESPONSE, AWAITING_FINAL_HEAD, READING_BODY,
    READING_CHUNK_SIZE, READING_CHUNK, READING_CHUNK_END, READING_TRAILERS,
    READING_UNTIL_CLOSE, RESPONSE_DONE, CLOSED,
)

# -- Events ----------------------------------------------------------------------------------
SEND_REQUEST = 'SEND_REQUEST'  # a request (or its head) was formatted to be sent
PEER_CLOSED = 'PEER_CLOSED'  # end of file, no response in progress
INFORMATIONAL_HEAD = 'INFORMATIONAL_HEAD'  # a 1xx head: another head follows
SIZED_HEAD = 'SIZED_HEAD'  # the final head; its body has a known length (0 for HEAD, 204, 304)
CHUNKED_HEAD = 'CHUNKED_HEAD'  # the final head; its body is chunked
CLOSE_DELIMITED_HEAD = 'CLOSE_DELIMITED_HEAD'  # the final head; its body ends at end of file
CHUNK_STARTED = 'CHUNK_STARTED'  # a chunk-size line of a size above 0
LAST_CHUNK_STARTED = 'LAST_CHUNK_STARTED'  # the chunk-size line of size 0: trailers follow
CHUNK_DATA_READ = 'CHUNK_DATA_READ'  # the last byte of a chunk's data
CHUNK_ENDED = 'CHUNK_ENDED'  # the CRLF after a chunk's data
MESSAGE_ENDED = 'MESSAGE_ENDED'  # the body (or the trailers) ended: EndOfMessage
NEXT_CYCLE = 'NEXT_CYCLE'  # start_next_cycle: the connection is reused

EVENTS = (
    SEND_REQUEST, PEER_CLOSED, INFORMATIONAL_HEAD, SIZED_HEAD, CHUNKED_HEAD,
    CLOSE_DELIMITED_HEAD, CHUNK_STARTED, LAST_CHUNK_STARTED, CHUNK_DATA_READ, CHUNK_ENDED,
    MESSAGE_ENDED, NEXT_CYCLE,
)


class _Moves(dict):
    """One state's row of the table, event -> next state; an event it lacks is refused."""
    __slots__ = ('state',)

    def __init__(self, state, moves):
        dict.__init__(self, moves)
        self.state = state

    def __missing__(self, event):
        raise ProtocolStateError(
            'HTTP/1.1 client connection: %s cannot happen in state %s (allowed there: %s)'
            % (event, self.state, ', '.join(sorted(self)) or 'nothing'))


def _table(rows):
    return dict((state, _Moves(state, moves)) for state, moves in rows.items())


# state -> {event: next state}, as h11 writes its table: every move of the protocol is
# here, and nothing else is allowed. Applying an event is a subscript, not a function call:
# it runs four times per response at least, and against assigning the next state directly
# a call cost a minimal keep-alive fetch 1.9% more instructions on 3.11, the subscript
# 1.1% (benchmarks/README.md). RESPONSE_DONE waits for the caller and CLOSED is final:
# from those only NEXT_CYCLE moves (httputil's start_next_cycle checks first that the
# connection may be reused).
_HEAD_MOVES = {
    INFORMATIONAL_HEAD: AWAITING_FINAL_HEAD,
    SIZED_HEAD: READING_BODY,
    CHUNKED_HEAD: READING_CHUNK_SIZE,
    CLOSE_DELIMITED_HEAD: READING_UNTIL_CLOSE,
}
TRANSITIONS = _table({
    AWAITING_REQUEST: {SEND_REQUEST: AWAITING_RESPONSE, PEER_CLOSED: CLOSED},
    AWAITING_RESPONSE: _HEAD_MOVES,
    AWAITING_FINAL_HEAD: _HEAD_MOVES,
    READING_BODY: {MESSAGE_ENDED: RESPONSE_DONE},
    READING_CHUNK_SIZE: {CHUNK_STARTED: READING_CHUNK, LAST_CHUNK_STARTED: READING_TRAILERS},
    READING_CHUNK: {CHUNK_DATA_READ: READING_CHUNK_END},
    READING_CHUNK_END: {CHUNK_ENDED: READING_CHUNK_SIZE},
    READING_TRAILERS: {MESSAGE_ENDED: RESPONSE_DONE},
    READING_UNTIL_CLOSE: {MESSAGE_ENDED: RESPONSE_DONE},
    RESPONSE_DONE: {NEXT_CYCLE: AWAITING_REQUEST},
    CLOSED: {},
})
