# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

import codecs

import pytest

from tinytornado.crawler.robots import (
    DEFAULT_MAX_CRAWL_DELAY, RobotsRules, product_token, robots_url,
)

USER_AGENT = 'tinycrawl/0.1 (+http://example.com/bot)'


def rules_for_everyone(lines):
    return RobotsRules.parse(u'User-agent: *\n%s\n' % lines)


# Google's documented precedence examples, then the other matching rules.
@pytest.mark.parametrize('lines, path, expected', [
    (u'Allow: /p\nDisallow: /', '/page', True),
    (u'Allow: /folder\nDisallow: /folder', '/folder/page', True),
    (u'Disallow: /folder\nAllow: /folder', '/folder/page', True),
    (u'Allow: /page\nDisallow: /*.htm', '/page.htm', False),
    (u'Allow: /page\nDisallow: /*.ph', '/page.php', True),
    (u'Allow: /$\nDisallow: /', '/', True),
    (u'Allow: /$\nDisallow: /', '/page.htm', False),
    (u'Disallow: /private/\nAllow: /private/open/', '/private/open/1.html', True),
    (u'Disallow: /private/\nAllow: /private/open/', '/private/1.html', False),
    (u'Disallow: /fish*', '/fishheads', False),
    (u'Disallow: /fish', '/Fish.html', True),
    (u'Disallow: /*.php$', '/x.php', False),
    (u'Disallow: /*.php$', '/x.php?y=1', True),
    (u'Disallow: /a?b=c', '/a?b=c', False),
    (u'Disallow: /a%3cd', '/a%3Cd', False),
    (u'Disallow: /caf\u00e9', '/caf%C3%A9/menu', False),
    (u'Disallow:', '/anything', True),
    (u'Disallow: /', '/robots.txt', True),
])
def test_longest_match_wins_and_allow_wins_ties(lines, path, expected):
    rules = rules_for_everyone(lines)
    assert rules.allowed('http://example.com' + path, USER_AGENT) is expected


def test_the_group_is_chosen_by_the_product_token():
    rules = RobotsRules.parse(b'User-agent: bot\nDisallow: /\n\n'
                              b'User-agent: TinyCrawl\nDisallow: /mine\n\n'
                              b'User-agent: *\nDisallow: /all\n')
    assert rules.allowed('http://example.com/all', USER_AGENT)
    assert not rules.allowed('http://example.com/mine', USER_AGENT)
    assert not rules.allowed('http://example.com/all', 'OtherBot/2.0')
    assert rules.allowed('http://example.com/mine', 'OtherBot/2.0')


def test_a_group_whose_name_is_part_of_the_token_does_not_apply():
    rules = RobotsRules.parse(u'User-agent: crawl\nDisallow: /\nCrawl-delay: 5\n\n'
                              u'User-agent: *\nDisallow: /x\n')
    assert rules.allowed('http://example.com/a', USER_AGENT)
    assert not rules.allowed('http://example.com/x', USER_AGENT)
    assert rules.crawl_delay(USER_AGENT) is None
    assert not rules.allowed('http://example.com/a', 'Crawl/1.0')
    assert rules.crawl_delay('Crawl/1.0') == 5


@pytest.mark.parametrize('user_agent, expected', [
    ('tinycrawl/0.1 (+http://example.com/bot)', 'tinycrawl'), ('Googlebot', 'googlebot'),
    ('my_crawler-2', 'my_crawler-'), (' spaced/1', 'spaced'),
])
def test_product_token(user_agent, expected):
    assert product_token(user_agent) == expected


def test_bytes_are_read_as_utf8_with_a_bom_and_bad_bytes_tolerated():
    body = codecs.BOM_UTF8 + u'User-agent: *\nDisallow: /caf\u00e9\n'.encode('utf-8') + b'\xff\n'
    rules = RobotsRules.parse(body)
    assert not rules.allowed('http://example.com/caf%C3%A9', USER_AGENT)
    assert rules.allowed('http://example.com/cafe', USER_AGENT)


@pytest.mark.parametrize('value, expected', [
    (u'2.5', 2.5), (u'0', 0.0), (u'1000', DEFAULT_MAX_CRAWL_DELAY), (u'-1', None),
    (u'nan', None), (u'inf', None), (u'soon', None),
])
def test_crawl_delay_is_capped_and_nonsense_ignored(value, expected):
    rules = rules_for_everyone(u'Crawl-delay: %s' % value)
    assert rules.crawl_delay(USER_AGENT) == expected


def test_crawl_delay_cap_is_an_argument_and_absent_delay_is_none():
    assert rules_for_everyone(u'Crawl-delay: 9').crawl_delay(USER_AGENT, max_delay=3) == 3
    assert rules_for_everyone(u'Disallow: /x').crawl_delay(USER_AGENT) is None
    assert RobotsRules.allow_all().crawl_delay(USER_AGENT) is None


@pytest.mark.parametrize('status, expected', [
    (200, False), (301, True), (404, True), (403, True), (410, True),
    (429, False), (500, False), (503, False), (None, False),
])
def test_for_status_follows_rfc_9309(status, expected):
    rules = RobotsRules.for_status(status, b'User-agent: *\nDisallow: /\n')
    assert rules.allowed('http://example.com/page', USER_AGENT) is expected


def test_allow_all_and_disallow_all():
    assert RobotsRules.allow_all().allowed('http://example.com/x', USER_AGENT)
    assert not RobotsRules.disallow_all().allowed('http://example.com/x', USER_AGENT)


@pytest.mark.parametrize('url, expected', [
    ('http://example.com/a/b?c', 'http://example.com/robots.txt'),
    ('https://example.com:8443/', 'https://example.com:8443/robots.txt'),
    ('http://[::1]:8000/x', 'http://[::1]:8000/robots.txt'),
])
def test_robots_url(url, expected):
    assert robots_url(url) == expected
