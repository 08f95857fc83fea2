"""The crawl's journal in SQLite: what was queued, what finished, so a killed crawl resumes.

One row per URL ever queued: its depth, redirect budget and tries made so far (a URL
handed out counts one at once: a process killed during its request leaves the try
counted), and its statistic (as JSON) once it has finished. One row per failing host: its failures in a row
and the wall-clock time its pause ends (loop times mean nothing to another process). In
``meta``, as JSON: the crawl's roots and the options that shape it, which a resume takes
back. A URL's statistic and the URLs it discovered are written in one transaction, so
whatever instant the process dies at, every URL is either finished with its links queued,
or still queued: `restore` gives back both kinds, and only the second is fetched again.
SQLite hands each commit to the operating system before returning (``synchronous=OFF``
skips the fsync, which only a power cut, not a killed process, needs).
The journal is the crawl's record: the output's line of a URL is written after the URL is
journaled, and made again from its statistic here if a kill came between (``output``).

A journal written before tries, hosts and options were kept gains the column and table
on opening; its crawl resumes with the options given then, which are kept from then on.
"""
from __future__ import absolute_import, division, print_function

import json
import sqlite3
import time

import six

__all__ = ['Journal', 'JournalEntry', 'as_journaled', 'contradictions']

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS urls (
    url TEXT PRIMARY KEY,
    depth INTEGER NOT NULL,
    max_redirect INTEGER NOT NULL,
    statistic TEXT,
    tries INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS hosts (
    host TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    paused_until REAL NOT NULL
);
"""


class JournalEntry(object):
    """A URL read back from the journal; `statistic` is a dict, or None if unfinished;
    `tries` counts the tries of an unfinished URL: those failed, and those whose process
    ended during them."""
    __slots__ = ('url', 'depth', 'max_redirect', 'statistic', 'tries')

    def __init__(self, url, depth, max_redirect, statistic, tries=0):
        self.url = url
        self.depth = depth
        self.max_redirect = max_redirect
        self.statistic = statistic
        self.tries = tries


class Journal(object):
    """A crawl's state in the SQLite file at `path` (created if missing)."""

    def __init__(self, path):
        self.path = path
        self.connection = sqlite3.connect(path)
        try:
            self.connection.execute('PRAGMA journal_mode=WAL')
            self.connection.execute('PRAGMA synchronous=OFF')
            self.connection.executescript(_SCHEMA)
            self._migrate()
        except sqlite3.Error:
            self.connection.close()
            raise

    def _migrate(self):
        columns = [row[1] for row in self.connection.execute('PRAGMA table_info(urls)')]
        if 'tries' not in columns:  # a journal of a version that did not count tries
            with self.connection:
                self.connection.execute(
                    'ALTER TABLE urls ADD COLUMN tries INTEGER NOT NULL DEFAULT 0')

    def is_empty(self):
        """True if no URL was ever queued here."""
        return self.connection.execute('SELECT 1 FROM urls LIMIT 1').fetchone() is None

    def get_meta(self, key, default=None):
        """The JSON value stored under `key` (its strings native), or `default`."""
        row = self.connection.execute('SELECT value FROM meta WHERE key = ?',
                                      (key,)).fetchone()
        return default if row is None else _native_strings(json.loads(row[0]))

    def set_meta(self, key, value):
        with self.connection:
            self.connection.execute('INSERT OR REPLACE INTO meta VALUES (?, ?)',
                                    (key, _dumps(value)))

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

    def handed_out(self, url, tries):
        """Record that `url` was handed out with `tries` counted: set before its request
        goes, so that a process killed during it leaves the try counted."""
        with self.connection:
            self.connection.execute('UPDATE urls SET tries = ? WHERE url = ?', (tries, url))

    def failed(self, url, tries, host, failures, pause):
        """Record a failed try of `url`, atomically: the `tries` it has made, and its
        `host`'s `failures` in a row and `pause` (seconds from now)."""
        with self.connection:
            self.connection.execute('UPDATE urls SET tries = ? WHERE url = ?', (tries, url))
            self.connection.execute('INSERT OR REPLACE INTO hosts VALUES (?, ?, ?)',
                                    (host, failures, time.time() + pause))

    def host_succeeded(self, host):
        """Forget the failures of `host`: it answered."""
        with self.connection:
            self.connection.execute('DELETE FROM hosts WHERE host = ?', (host,))

    def hosts(self):
        """{host: (failures in a row, seconds its pause has left)} of the failing hosts."""
        now = time.time()
        return dict((six.ensure_str(host), (failures, max(0.0, paused_until - now)))
                    for host, failures, paused_until in self.connection.execute(
                        'SELECT host, failures, paused_until FROM hosts'))

    def restore(self):
        """Every URL in the journal, as `JournalEntry` objects, in the order queued."""
        cursor = self.connection.execute(
            'SELECT url, depth, max_redirect, statistic, tries FROM urls ORDER BY rowid')
        for url, depth, max_redirect, statistic, tries in cursor:
            yield JournalEntry(six.ensure_str(url), depth, max_redirect,
                               None if statistic is None else _native_strings(
                                   json.loads(statistic)), tries)

    def close(self):
        self.connection.close()

    def _insert(self, entries):
        self.connection.executemany(
            'INSERT OR IGNORE INTO urls (url, depth, max_redirect) VALUES (?, ?, ?)', entries)


def as_journaled(value):
    """`value` as the journal gives it back: JSON's types, native strings, compiled
    patterns as their text."""
    return _native_strings(json.loads(_dumps(value)))


def contradictions(given, stored):
    """The names, sorted, of the options in `given` whose values differ from `stored`'s once
    journaled; names `stored` lacks contradict nothing (a journal of an older version)."""
    return sorted(name for name, value in given.items()
                  if name in stored and as_journaled(value) != stored[name])


def _dumps(value):
    return json.dumps(value, sort_keys=True, default=_pattern_text)


def _pattern_text(value):
    # A compiled --include/--exclude pattern: its text is what the crawl was given.
    if hasattr(value, 'pattern'):
        return value.pattern
    raise TypeError('%r cannot be journaled' % (value,))


def _native_strings(value):
    """`value`, read from JSON, with its text (in lists and dicts too) as native strings."""
    if isinstance(value, six.text_type):
        return six.ensure_str(value)
    if isinstance(value, list):
        return [_native_strings(item) for item in value]
    if isinstance(value, dict):
        return dict((six.ensure_str(key), _native_strings(item))
                    for key, item in value.items())
    return value
