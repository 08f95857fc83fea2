"""The crawl's journal in SQLite: what was queued, what finished, so a killed crawl resumes.

One row per URL ever queued: its depth and redirect budget, and its statistic (as JSON)
once it has finished. A URL's statistic and the URLs it discovered are written in one
transaction, so whatever instant the process dies at, every URL is either finished with
its links queued, or still queued: `restore` gives back both kinds, and only the second is
fetched again. SQLite hands each commit to the operating system before returning
(``synchronous=OFF`` skips the fsync, which only a power cut, not a killed process, needs).
The journal is the crawl's record: the output's line of a URL is written after the URL is
journaled, and made again from its statistic here if a kill came between (``output``).
"""
from __future__ import absolute_import, division, print_function

import json
import sqlite3

import six

__all__ = ['Journal', 'JournalEntry']

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS urls (
    url TEXT PRIMARY KEY,
    depth INTEGER NOT NULL,
    max_redirect INTEGER NOT NULL,
    statistic TEXT
);
"""


class JournalEntry(object):
    """A URL read back from the journal; `statistic` is a dict, or None if unfinished."""
    __slots__ = ('url', 'depth', 'max_redirect', 'statistic')

    def __init__(self, url, depth, max_redirect, statistic):
        self.url = url
        self.depth = depth
        self.max_redirect = max_redirect
        self.statistic = statistic


class Journal(object):
    """A crawl's state in the SQLite file at `path` (created if missing)."""

    def __init__(self, path):
        self.path = path
        self.connection = sqlite3.connect(path)
        self.connection.execute('PRAGMA journal_mode=WAL')
        self.connection.execute('PRAGMA synchronous=OFF')
        self.connection.executescript(_SCHEMA)

    def is_empty(self):
        """True if no URL was ever queued here."""
        return self.connection.execute('SELECT 1 FROM urls LIMIT 1').fetchone() is None

    def get_meta(self, key, default=None):
        """The JSON value stored under `key`, or `default`."""
        row = self.connection.execute('SELECT value FROM meta WHERE key = ?',
                                      (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def set_meta(self, key, value):
        with self.connection:
            self.connection.execute('INSERT OR REPLACE INTO meta VALUES (?, ?)',
                                    (key, json.dumps(value)))

    def queue(self, entries):
        """Record `entries`, (url, depth, max_redirect) triples, as queued."""
        with self.connection:
            self._insert(entries)

    def finish(self, statistic, new_entries):
        """Record `statistic` (a FetchStatistic) and the URLs it queued, atomically."""
        with self.connection:
            self.connection.execute('UPDATE urls SET statistic = ? WHERE url = ?',
                                    (json.dumps(statistic.to_dict()), statistic.url))
            self._insert(new_entries)

    def restore(self):
        """Every URL in the journal, as `JournalEntry` objects, in the order queued."""
        cursor = self.connection.execute(
            'SELECT url, depth, max_redirect, statistic FROM urls ORDER BY rowid')
        for url, depth, max_redirect, statistic in cursor:
            yield JournalEntry(six.ensure_str(url), depth, max_redirect,
                               None if statistic is None else _native_strings(
                                   json.loads(statistic)))

    def close(self):
        self.connection.close()

    def _insert(self, entries):
        self.connection.executemany(
            'INSERT OR IGNORE INTO urls (url, depth, max_redirect) VALUES (?, ?, ?)', entries)


def _native_strings(fields):
    """A statistic's dict with text values as native strings, as the crawler made them."""
    return dict((six.ensure_str(key), six.ensure_str(value)
                 if isinstance(value, six.text_type) else value)
                for key, value in fields.items())
