"""The crawler's table of options (crawloptions.py) and what is made from it.

Run as a script, it rewrites docs/crawler-options.md from the table;
test_the_docs_list_the_options fails while the two differ.
"""
from __future__ import absolute_import, division, print_function

import io
import os

import pytest

from tinytornado.crawler.application.cli import _option_values, build_parser
from tinytornado.crawler.crawloptions import (DEFAULT_OPTIONS, FILE_OPTIONS, JOURNALED_OPTIONS,
                                              NUMBER_LIMITS, OPTIONS, markdown_table)
from tinytornado.crawler.engine import Crawler

OPTIONS_DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'docs',
                           'crawler-options.md')
DOC_HEAD = """# The crawler's options

Generated from `tinytornado/crawler/crawloptions.py` by `python tests/test_crawler_options.py`;
the suite fails while this file and the table differ. "(command line)" marks an option of
`tinycrawl` alone; the others are keywords of `Crawler` too. A journaled option is kept in
the `--state` journal: a resume takes it back and refuses a value that contradicts it.

Politeness, the same in one process and over Redis: at most `max_per_host` requests in
flight to a host; between two requests to it a delay (fixed `delay`, robots.txt's
Crawl-delay, or adapted to its latency); and, whatever the delay, at most `max_rate`
requests per second to it. The ceiling's default, 5 per second (one request every 200 ms),
is the middle of what site owners expect of a crawler (roughly 1-10 per second): below
the limits most rate limiters put on one client, so a crawl is not answered 429s and
banned, while a site of 1,000 pages still takes minutes, not hours, as the 1-5 s delays of
Heritrix and Nutch would make it. The demo site (ours, on loopback) is crawled without it,
and `--max-rate 0` lifts it for a site of your own.

"""


def options_doc():
    return DOC_HEAD + markdown_table()


def test_the_docs_list_the_options():
    with io.open(OPTIONS_DOC, encoding='utf-8') as f:
        assert f.read() == options_doc(), 'run python tests/test_crawler_options.py'


def test_every_option_is_declared_once():
    names = [option.name for option in OPTIONS]
    assert len(names) == len(set(names))


def test_the_lists_are_made_from_the_table():
    assert list(DEFAULT_OPTIONS)[:4] == ['max_tasks', 'max_redirect', 'max_tries', 'strict']
    assert DEFAULT_OPTIONS['max_per_host'] == 2 and DEFAULT_OPTIONS['delay'] is None
    assert 'demo_pages' not in DEFAULT_OPTIONS  # the command line's alone
    assert set(JOURNALED_OPTIONS) <= set(DEFAULT_OPTIONS)
    assert 'max_tasks' not in JOURNALED_OPTIONS and 'max_depth' in JOURNALED_OPTIONS
    assert ('demo_port', 'at most', 65535) in NUMBER_LIMITS
    assert [name for name, _ in FILE_OPTIONS] == ['output', 'summary', 'report', 'warc',
                                                  'state', 'collect', 'ca_file']


def test_the_command_line_has_every_default_of_the_table():
    args = vars(build_parser().parse_args([]))
    for option in OPTIONS:
        if option.cli is not None:
            assert args[option.name] == option.default, option.name


def test_the_command_line_passes_every_crawler_option_it_has():
    # Every option with flags, --output's path too: the Crawler owns its output file.
    options = _option_values(build_parser().parse_args(['--max-depth', '3', '--lenient']))
    assert (options['max_depth'], options['strict']) == (3, False)
    assert set(options) == set(option.name for option in OPTIONS if option.cli is not None)
    api = dict((name, value) for name, value in options.items() if name in DEFAULT_OPTIONS)
    Crawler(['http://example.com/'], **api)  # every one of them a Crawler option


def test_a_crawler_takes_the_defaults_and_refuses_unknown_options():
    crawler = Crawler(['http://example.com/'], max_depth=2)
    assert crawler.options.max_depth == 2
    assert crawler.options.max_redirect == DEFAULT_OPTIONS['max_redirect']
    with pytest.raises(TypeError) as raised:
        Crawler(['http://example.com/'], max_depht=2, demo_pages=3)
    assert str(raised.value) == 'unknown Crawler options: demo_pages, max_depht'


@pytest.mark.parametrize('options, message', [
    ({'max_tasks': 0}, 'max_tasks must be at least 1 (got 0)'),
    ({'max_redirect': -1}, 'max_redirect must be at least 0 (got -1)'),
    ({'connect_timeout': 0.0}, 'connect_timeout must be more than 0 (got 0.0)'),
    ({'delay': float('nan')}, 'delay must be a finite number (got nan)'),
])
def test_a_crawler_checks_its_numbers_against_the_table(options, message):
    with pytest.raises(ValueError) as raised:
        Crawler(['http://example.com/'], **options)
    assert str(raised.value) == message


if __name__ == '__main__':
    with io.open(OPTIONS_DOC, 'w', encoding='utf-8') as f:
        f.write(options_doc())
