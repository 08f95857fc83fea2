"""The seen set: every URL the crawl has queued, so that none is queued twice.

A plain ``set`` of URL strings costs 100 bytes or more per URL. `HashedURLSet` keeps the
64-bit `urls.url_hash` of each URL instead, in one flat array with open addressing: 8 bytes
per slot at a load between 1/3 and 2/3, so 12 to 24 bytes per URL and no Python object per
entry. Two URLs with the same hash would count as one; with 10**8 URLs the chance that any
pair does is about 3e-4 (see `url_hash`).
"""
from __future__ import absolute_import, division, print_function

import array

from tinytornado._compat import UINT64_TYPECODE

from .urls import url_hash

__all__ = ['HashedURLSet', 'new_seen_set']

_EMPTY = 0
_INITIAL_SLOTS = 1024  # a power of two, so that `& mask` picks a slot


class HashedURLSet(object):
    """A set of normalised URLs stored as 64-bit hashes: ``add``, ``in``, ``len``."""

    def __init__(self):
        self._size = 0
        self._slots = self._new_table(_INITIAL_SLOTS)

    def __len__(self):
        return self._size

    def __contains__(self, url):
        slots = self._slots
        return slots[self._find(slots, _key(url))] != _EMPTY

    def add(self, url):
        """Add `url` (nothing happens if it is in the set already)."""
        key = _key(url)
        index = self._find(self._slots, key)
        if self._slots[index] == _EMPTY:
            self._slots[index] = key
            self._size += 1
            if self._size * 3 > len(self._slots) * 2:
                self._grow()

    @staticmethod
    def _new_table(size):
        if UINT64_TYPECODE is None:
            return [_EMPTY] * size  # no 64-bit array type here: correct, just larger
        return array.array(UINT64_TYPECODE, [_EMPTY]) * size

    @staticmethod
    def _find(slots, key):
        """The slot holding `key`, or the empty slot where it would go (linear probing)."""
        mask = len(slots) - 1
        index = key & mask
        while True:
            found = slots[index]
            if found == key or found == _EMPTY:
                return index
            index = (index + 1) & mask

    def _grow(self):
        old = self._slots
        slots = self._slots = self._new_table(len(old) * 2)
        for key in old:
            if key != _EMPTY:
                slots[self._find(slots, key)] = key


def _key(url):
    # 0 marks an empty slot, so the one URL hashing to 0 shares a key with the one at 1.
    return url_hash(url) or 1


def new_seen_set(hashed):
    """An empty seen set: a `HashedURLSet` if `hashed`, else a plain set of URLs."""
    return HashedURLSet() if hashed else set()
