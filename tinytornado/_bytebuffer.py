"""A byte buffer whose every operation costs O(bytes it moves), on Python 2.7 and 3.x.

The bytes live in ``data[start:end]``. Consuming from the front moves `start`
(``del data[:n]`` would move the whole rest on 2.7). `data` is one of two things:
- the buffer's storage, a bytearray: the room past `end` is where a socket reads into
  (``recv_into``), so incoming bytes are copied once, not into a chunk and then onto the
  buffer;
- a bytes object that an empty buffer `adopt`ed as it came from ``recv``: consuming it
  whole returns that very object, and a slice of it costs one copy, so the common case of
  a message arriving whole and read whole copies nothing. Writing more (`room`,
  `append`) first moves its unread bytes into the storage, once.

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
    """A FIFO of bytes: `append`, `room` + `commit` or `adopt` at the back, `consume` at
    the front.

    Args:
        keep: when the buffer empties, storage larger than this many bytes is freed, so
            one large transfer does not pin its memory for the buffer's life (None:
            never freed).
    """
    __slots__ = ('_data', '_storage', '_start', '_end', 'size', 'bytes_moved', '_keep')

    def __init__(self, keep=None):
        self._data = self._storage = bytearray()
        self._start = self._end = 0
        self.size = 0  # an attribute, not just __len__: the stream reads it on every call
        self.bytes_moved = 0
        self._keep = keep

    def __len__(self):
        return self.size

    def room(self, size):
        """A writable memoryview of at least `size` free bytes after the end; `commit` what
        was written there. The view must not be kept past the next call."""
        if len(self._data) - self._end < size:
            self._make_room(size)
        return memoryview(self._data)[self._end:]

    def adopt(self, chunk):
        """Take the non-empty bytes object `chunk` as the buffer's content, without a copy.
        The buffer must be empty.

        A memoryview may be adopted too, if the buffer is only read through `view` and
        `skip` (`consume` would return a slice of the memoryview, not bytes); its bytes
        must not change while the buffer holds them."""
        self._data = chunk
        self._start = 0
        self._end = self.size = len(chunk)

    def commit(self, size):
        """Take `size` bytes written at the start of the last `room` as part of the buffer."""
        self._end += size
        self.size += size

    def append(self, data):
        """Copy `data` (bytes, bytearray or memoryview) to the end."""
        size = len(data)
        if not size:
            return  # an adopted bytes object cannot take even an empty slice assignment
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
            if self._keep is not None and len(self._storage) > self._keep:
                self._storage = bytearray()
            self._data = self._storage
            self._start = self._end = 0

    def consume(self, size):
        """Remove and return the first `size` bytes, as bytes."""
        start = self._start
        end = start + size
        if self._data is not self._storage:
            data = self._data[start:end]  # adopted bytes: the object itself when whole
        elif size < _MEMORYVIEW_MIN:
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
        storage = self._storage
        capacity = len(storage)
        if self._data is not storage and live + size <= capacity:
            # Unused while a bytes object is adopted; each adopted byte moves here once.
            storage[0:live] = memoryview(self._data)[self._start:self._end]
        elif self._data is storage and live + size <= capacity and live <= capacity // 2:
            # Compacting in place pays off only if it frees at least half: then the bytes
            # it copies are fewer than those that fill the freed room: copying stays linear.
            storage[0:live] = storage[self._start:self._end]
        else:
            storage = bytearray(max(2 * capacity, live + size))
            storage[0:live] = memoryview(self._data)[self._start:self._end]
            self._storage = storage
        self._data = storage
        self.bytes_moved += live
        self._start, self._end = 0, live
