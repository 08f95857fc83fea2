"""A byte buffer whose every operation costs O(bytes it moves), on Python 2.7 and 3.x.

The bytes live in ``data[start:end]`` of one bytearray. Consuming from the front moves
`start` (``del data[:n]`` would move the whole rest on 2.7); the room past `end` is where a
socket reads into (``recv_into``), so incoming bytes are copied once, not into a chunk and
then onto the buffer.

The bytearray is never resized in place: growing allocates a new one. So a memoryview of
it that outlives a call (kept alive by a traceback, say) can never make a later resize
fail with BufferError.

`bytes_moved` counts every byte copied or scanned, so tests can check that the work
grows linearly with the bytes that pass through, whatever the speed of the machine.
"""
from __future__ import absolute_import, division, print_function

__all__ = ['ByteBuffer']

# Copying a short slice through a memoryview costs more than the double copy it saves.
_MEMORYVIEW_MIN = 4096


class ByteBuffer(object):
    """A FIFO of bytes: `append` or `room` + `commit` at the back, `consume` at the front."""
    __slots__ = ('_data', '_start', '_end', 'size', 'bytes_moved')

    def __init__(self):
        self._data = bytearray()
        self._start = self._end = 0
        self.size = 0  # an attribute, not just __len__: the stream reads it on every call
        self.bytes_moved = 0

    def __len__(self):
        return self.size

    def room(self, size):
        """A writable memoryview of at least `size` free bytes after the end; `commit` what
        was written there. The view must not be kept past the next call."""
        if len(self._data) - self._end < size:
            self._make_room(size)
        return memoryview(self._data)[self._end:]

    def commit(self, size):
        """Take `size` bytes written at the start of the last `room` as part of the buffer."""
        self._end += size
        self.size += size

    def append(self, data):
        """Copy `data` (bytes, bytearray or memoryview) to the end."""
        size = len(data)
        if len(self._data) - self._end < size:
            self._make_room(size)
        self._data[self._end:self._end + size] = data
        self._end += size
        self.size += size
        self.bytes_moved += size

    def view(self):
        """A memoryview of all the buffered bytes; must not be kept past the next call."""
        return memoryview(self._data)[self._start:self._end]

    def skip(self, size):
        """Drop `size` bytes from the front (they were sent from a `view`)."""
        self._start += size
        self.size -= size
        if not self.size:
            self._start = self._end = 0

    def consume(self, size):
        """Remove and return the first `size` bytes, as bytes."""
        start = self._start
        end = start + size
        if size < _MEMORYVIEW_MIN:
            data = bytes(self._data[start:end])
        else:
            data = memoryview(self._data)[start:end].tobytes()
        self.bytes_moved += size
        self.skip(size)
        return data

    def copy_to(self, view):
        """Move up to len(view) bytes from the front into the writable `view`; returns the
        count."""
        size = min(len(view), self.size)
        view[:size] = memoryview(self._data)[self._start:self._start + size]
        self.bytes_moved += size
        self.skip(size)
        return size

    def find(self, needle, start=0):
        """Index of `needle` counted from the front, searching from `start`; -1 if absent."""
        self.bytes_moved += self.size - start
        index = self._data.find(needle, self._start + start, self._end)
        return index - self._start if index >= 0 else -1

    def search(self, regex):
        """Index just past the first match of compiled bytes `regex`; -1 if none."""
        self.bytes_moved += self.size
        match = regex.search(self._data, self._start, self._end)
        return match.end() - self._start if match else -1

    def _make_room(self, size):
        live = self.size
        capacity = len(self._data)
        # Compacting in place pays off only if it frees at least half: then the bytes it
        # copies are fewer than those that fill the freed room, so copying stays linear.
        if live + size <= capacity and live <= capacity // 2:
            self._data[0:live] = self._data[self._start:self._end]
        else:
            data = bytearray(max(2 * capacity, live + size))
            data[0:live] = memoryview(self._data)[self._start:self._end]
            self._data = data
        self.bytes_moved += live
        self._start, self._end = 0, live

    def release(self, keep):
        """Free the storage if the buffer is empty and holds more than `keep` bytes of room,
        so one large transfer does not pin its memory for the stream's life."""
        if not self.size and len(self._data) > keep:
            self._data = bytearray()
            self._start = self._end = 0
