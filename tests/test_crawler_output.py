"""The crawl's output file: its lines, and how a resumed crawl mends it from the journal
(a line missing, a torn last line, no file at all) so that it holds one line per URL.
"""
from __future__ import absolute_import, division, print_function

import io
import json

import pytest

from tinytornado.crawler.journal import Journal
from tinytornado.crawler.output import mend_output, open_output, statistic_line
from tinytornado.crawler.stats import FetchStatistic

STATISTICS = [
    FetchStatistic('http://a.test/', status=200, size=120, content_type='text/html',
                   encoding='utf-8', num_urls=3, num_new_urls=3, elapsed=0.012345),
    FetchStatistic('http://a.test/caf%C3%A9', status=301, next_url='http://a.test/x',
                   depth=1, elapsed=0.1),
    FetchStatistic('http://a.test/x', exception=u'ConnectError: caf\u00e9 refused', depth=1,
                   tries=4, elapsed=1.5),
]
PENDING = ('http://a.test/later', 1, 10)


@pytest.fixture
def journal(tmpdir):
    """A journal with the three STATISTICS finished and one URL still queued."""
    journal = Journal(str(tmpdir.join('crawl.sqlite')))
    journal.queue([(STATISTICS[0].url, 0, 10)])
    journal.finish(STATISTICS[0], [(s.url, 1, 10) for s in STATISTICS[1:]] + [PENDING])
    for statistic in STATISTICS[1:]:
        journal.finish(statistic, [])
    yield journal
    journal.close()


@pytest.fixture
def path(tmpdir):
    return str(tmpdir.join('out.jsonl'))


def whole_lines():
    """Each statistic's line as the engine writes it, encoded."""
    return [statistic_line(s.to_dict()).encode('utf-8') for s in STATISTICS]


def write(path, data):
    with io.open(path, 'wb') as output:
        output.write(data)


def read(path):
    with io.open(path, 'rb') as output:
        return output.read()


def test_a_line_is_sorted_json_with_a_newline():
    line = statistic_line(STATISTICS[2].to_dict())
    assert line.endswith(u'\n') and line.count(u'\n') == 1
    assert FetchStatistic.from_dict(json.loads(line)) == STATISTICS[2]
    keys = [line.index(u'"%s"' % name) for name in FetchStatistic._fields]
    assert [name for _, name in sorted(zip(keys, FetchStatistic._fields))] == sorted(
        FetchStatistic._fields)


def test_the_lines_missing_are_made_again_byte_for_byte(journal, path):
    lines = whole_lines()
    write(path, lines[0])
    assert mend_output(path, journal) == 2
    assert read(path) == b''.join(lines)
    assert mend_output(path, journal) == 0  # mended once, left alone after
    assert read(path) == b''.join(lines)


@pytest.mark.parametrize('cut', [1, 20, -1])
def test_a_torn_last_line_is_cut_and_written_whole(journal, path, cut):
    lines = whole_lines()
    write(path, lines[0] + lines[1][:cut])
    assert mend_output(path, journal) == 2
    assert read(path) == b''.join(lines)


def test_lines_missing_anywhere_are_appended_in_the_journals_order(journal, path):
    lines = whole_lines()
    write(path, lines[1])
    mend_output(path, journal)
    assert read(path) == lines[1] + lines[0] + lines[2]


def test_a_missing_file_gets_every_finished_url(journal, path):
    assert mend_output(path, journal) == 3
    assert read(path) == b''.join(whole_lines())


def test_a_whole_line_that_is_not_a_statistic_is_refused(journal, path):
    for junk in (b'not json\n', b'{"status": 200}\n', b'[1]\n', b'"\xff"\n'):
        write(path, whole_lines()[0] + junk)
        with pytest.raises(ValueError) as raised:
            mend_output(path, journal)
        assert 'line 2 ' in str(raised.value)
        assert read(path) == whole_lines()[0] + junk  # left as it was


def test_open_output_empties_a_new_crawls_file(path):
    write(path, b'an older crawl\n')
    with open_output(path) as output:
        output.write(u'x\n')
    assert read(path) == b'x\n'


def test_open_output_of_a_resumed_crawl_mends_then_appends(journal, path):
    lines = whole_lines()
    write(path, lines[2] + lines[0][:5])
    resumed = statistic_line({'url': PENDING[0]})
    with open_output(path, journal.path) as output:
        output.write(resumed)
    assert read(path) == lines[2] + lines[0] + lines[1] + resumed.encode('utf-8')


def test_a_shared_crawls_worker_keeps_its_whole_lines_and_appends(path):
    lines = whole_lines()
    write(path, lines[0] + lines[1][:20])  # killed while writing its second line
    with open_output(path, shared=True) as output:
        output.write(lines[2].decode('utf-8'))
    assert read(path) == lines[0] + lines[2]
    with open_output(str(path) + '.new', shared=True) as output:  # no file yet
        output.write(lines[1].decode('utf-8'))
    assert read(str(path) + '.new') == lines[1]
