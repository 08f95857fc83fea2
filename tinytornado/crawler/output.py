"""The crawl's output: a JSON line per finished URL, and its mending when a crawl resumes.

The engine journals a URL as finished before it writes the URL's line, so the output
never holds a line the journal lacks; a killed crawl's output may lack the line of the last
URL it journaled, and end in a torn line. The journal keeps each finished URL's statistic,
from which its line is made again, byte for byte. `open_output` for a resumed crawl cuts
the torn line and appends the lines missing, so whatever instant the process died at, the
output then holds exactly one line per finished URL. Mending twice changes nothing, so a
kill while mending is mended by the next resume.
"""
from __future__ import absolute_import, division, print_function

import io
import json
import os
import sys

import six

from .journal import Journal

__all__ = ['statistic_line', 'open_output', 'mend_output', 'STDOUT', 'STDOUT_NAME']

STDOUT = '-'  # the path that names standard output
STDOUT_NAME = 'standard output'


def statistic_line(fields):
    """The output line, text with its newline, of a statistic's dict (`to_dict`)."""
    return six.ensure_text(json.dumps(fields, sort_keys=True)) + u'\n'


def open_output(path, state=None, shared=False):
    """Open the file at `path` (UTF-8 text) for a crawl to write its lines to.

    A new crawl (`state` None) starts the file empty. A crawl resuming from the journal
    `state` (a `journal.Journal`, or its path) appends to it, once `mend_output` has made
    it whole. A worker of a `shared`
    crawl (on Redis) keeps the file's whole lines, from its earlier runs, and appends: a
    torn last line is cut (its URL is in the crawl's results, which ``--collect`` drains).

    `path` `STDOUT` ('-') opens a stream of standard output's own, named `STDOUT_NAME`,
    which closing leaves standard output open.

    Raises:
        ValueError: a whole line of the file is not a crawl's output line.
    """
    if path == STDOUT:
        sys.stdout.flush()  # what was printed before comes before the lines
        raw = io.FileIO(os.dup(sys.stdout.fileno()), 'w')
        raw.name = STDOUT_NAME
        return io.TextIOWrapper(raw, encoding='utf-8')
    if shared:
        if os.path.exists(path):
            _cut_torn_line(path)
        return io.open(path, 'a', encoding='utf-8')
    if state is None:
        return io.open(path, 'w', encoding='utf-8')
    if isinstance(state, Journal):
        mend_output(path, state)
    else:
        journal = Journal(state)
        try:
            mend_output(path, journal)
        finally:
            journal.close()
    return io.open(path, 'a', encoding='utf-8')


def mend_output(path, journal):
    """Make the file at `path` hold a line for each URL `journal` has as finished.

    Cuts a last line that has no newline (torn by a kill), then appends, in the journal's
    order, the line of each finished URL the file lacks; a missing file is created. The
    file is read as a stream: only the set of its URLs is held. Returns how many lines
    were appended.
    """
    written_urls = _cut_torn_line(path) if os.path.exists(path) else set()
    appended = 0
    with io.open(path, 'a', encoding='utf-8') as output:
        for entry in journal.restore():
            if entry.statistic is not None and entry.url not in written_urls:
                output.write(statistic_line(entry.statistic))
                appended += 1
    return appended


def _cut_torn_line(path):
    """The URLs of the whole lines of the file at `path`, once a torn last line is cut."""
    urls = set()
    whole = 0  # bytes up to the end of the last whole line
    with io.open(path, 'r+b') as output:
        for number, line in enumerate(output, 1):
            if not line.endswith(b'\n'):
                output.truncate(whole)
                break
            urls.add(_line_url(line, number))
            whole += len(line)
    return urls


def _line_url(line, number):
    try:
        return six.ensure_str(json.loads(line.decode('utf-8'))['url'])
    except (ValueError, KeyError, TypeError):  # UnicodeDecodeError is a ValueError
        raise ValueError('line %d of the output is not a crawl output line' % number)
