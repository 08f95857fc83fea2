"""iostream._StreamBuffer: Tornado 5.1's private buffer, which legacy code imports."""
from __future__ import absolute_import, division, print_function

import random

import pytest

from tinytornado.iostream import _StreamBuffer

KINDS = [bytes, bytearray, memoryview]


def make_buffer(threshold):
    buf = _StreamBuffer()
    buf._large_buf_threshold = threshold
    return buf


def front(buf, size):
    return buf.peek(size).tobytes()


def assert_holds(buf, expected):
    """`buf` holds `expected`: its length, and what peek shows for sizes small and large."""
    assert len(buf) == len(expected)
    for size in (1, 2, 7, 100, 5000):
        seen = front(buf, size)
        assert len(seen) <= size
        assert expected.startswith(seen)
        assert bool(seen) == bool(expected)


@pytest.mark.parametrize('kind', KINDS, ids=lambda kind: kind.__name__)
@pytest.mark.parametrize('threshold', [1, 10, 2048])
def test_appends_and_advances_keep_the_bytes_in_order(kind, threshold):
    rng = random.Random(7)
    buf = make_buffer(threshold)
    expected = b''
    for _ in range(300):
        if expected and rng.random() < 0.4:
            size = rng.randint(1, len(expected))
            buf.advance(size)
            expected = expected[size:]
        else:
            piece = bytes(bytearray(rng.randrange(256) for _ in range(rng.randint(0, 40))))
            buf.append(kind(piece))
            expected += piece
        assert_holds(buf, expected)
    buf.advance(len(expected))
    assert_holds(buf, b'')


def test_an_advance_may_span_segments_and_end_inside_one():
    buf = make_buffer(4)
    for piece in (b'abc', b'defgh', b'ij', b'klmnopq'):
        buf.append(piece)
    buf.advance(9)
    assert_holds(buf, b'jklmnopq')
    assert front(buf, 10) == b'j'  # peek stops at the end of the first segment


def test_small_pieces_are_gathered_into_segments_of_about_the_threshold():
    buf = make_buffer(10)
    for _ in range(10):
        buf.append(b'x')
    assert len(buf._buffers) == 1
    buf.append(b'y')
    assert len(buf._buffers) == 2
    buf.advance(10)
    assert len(buf._buffers) == 1
    assert front(buf, 5) == b'y'


def test_a_large_piece_is_a_segment_of_its_own_and_is_not_copied():
    buf = make_buffer(10)
    large = bytearray(b'L' * 11)
    buf.append(b'a')
    buf.append(large)
    buf.append(b'b')
    buf.append(b'c')
    assert len(buf._buffers) == 3  # 'a', the large piece, then 'b' and 'c' together
    large[0:1] = b'!'  # kept by reference, as in Tornado 5.1: the change shows
    buf.advance(1)
    assert front(buf, 20) == b'!' + b'L' * 10
    buf.advance(11)
    assert front(buf, 20) == b'bc'
    assert len(buf._buffers) == 1


def test_peek_of_an_empty_buffer_is_empty():
    assert front(_StreamBuffer(), 10) == b''


@pytest.mark.parametrize('size', [0, -1])
def test_peek_needs_a_positive_size(size):
    buf = _StreamBuffer()
    buf.append(b'abc')
    with pytest.raises(ValueError):
        buf.peek(size)


@pytest.mark.parametrize('size', [0, -1, 4])
def test_advance_needs_a_size_within_the_buffer(size):
    buf = _StreamBuffer()
    buf.append(b'abc')
    with pytest.raises(ValueError):
        buf.advance(size)
    assert_holds(buf, b'abc')


def test_appending_nothing_changes_nothing():
    buf = _StreamBuffer()
    buf.append(b'')
    buf.append(memoryview(b''))
    assert len(buf) == 0
    assert len(buf._buffers) == 0
