"""robots.txt rules, as RFC 9309 and Google read them, over the Protego parser.

Protego (Scrapy's parser; 0.2.x on 2.7 and 3.6, newer releases on 3.7+) already picks the
rule with the longest matching path and lets Allow win a tie, supports ``*`` and ``$``, and
reads ``Crawl-delay``. This wrapper adds what a crawler needs around it:

- bytes in, decoded as UTF-8 (RFC 9309) with a byte order mark dropped and bad bytes replaced;
- the group for a user agent is the one whose name equals its product token ('tinycrawl' in
  'tinycrawl/0.1 (+https://...)'), case-insensitively, as RFC 9309 says, else the '*' group.
  Protego's own matching differs between releases (a substring match before 0.6: a group
  named 'crawl' would apply to 'tinycrawl'), so other groups' names are blanked out of the
  text Protego parses, once per product token;
- /robots.txt itself is always allowed;
- `RobotsRules.sitemaps` lists its ``Sitemap:`` lines, which crawler/sitemaps.py reads;
- a negative, NaN or infinite `Crawl-delay` is ignored (Protego's releases disagree on the
  last two); the rest is capped;
- `RobotsRules.for_status` maps how the fetch of robots.txt went to rules: 2xx parses the
  body; 3xx (a redirect loop the client gave up on) and 4xx allow everything; 429, 5xx and an
  unreachable server (status None) disallow everything, since the site may be overloaded.
  This follows RFC 9309 section 2.3.1; a crawler that retries later can ask again.
"""
from __future__ import absolute_import, division, print_function

import codecs
import math
import re

import six
from protego import Protego

__all__ = ['RobotsRules', 'robots_url', 'product_token', 'DEFAULT_MAX_CRAWL_DELAY']

DEFAULT_MAX_CRAWL_DELAY = 30.0

_PRODUCT_TOKEN_RE = re.compile(r'[A-Za-z_-]+')
_USER_AGENT_LINE_RE = re.compile(r'^([ \t]*user[- ]?agent[ \t]*:[ \t]*)([^#\r\n]*)',
                                 re.I | re.M)
# A group name no product token contains (they are letters, '-' and '_').
_OTHER_AGENT = 'other.agent'


def robots_url(url):
    """The robots.txt URL for the site (scheme, host and port) of the normalised `url`."""
    return url[:url.index('/', url.index('//') + 2)] + '/robots.txt'


def product_token(user_agent):
    """The name robots.txt groups are matched against: 'tinycrawl' for 'tinycrawl/0.1 (..)'."""
    match = _PRODUCT_TOKEN_RE.match(user_agent.strip())
    return match.group().lower() if match else user_agent.strip().lower()


class RobotsRules(object):
    """What one site's robots.txt allows. Build with `parse`, `allow_all`, `disallow_all`
    or `for_status`."""

    def __init__(self, text=None, allow=True):
        self._text = text  # None: no rules, `allow` answers for every URL
        self._allow = allow
        self._parsers = {}  # product token -> Protego of the text with only its groups

    @classmethod
    def parse(cls, content):
        """Rules from the body of a robots.txt (bytes or text)."""
        if isinstance(content, six.binary_type):
            if content.startswith(codecs.BOM_UTF8):
                content = content[len(codecs.BOM_UTF8):]
            content = content.decode('utf-8', 'replace')
        return cls(content)

    @classmethod
    def allow_all(cls):
        return cls(None, allow=True)

    @classmethod
    def disallow_all(cls):
        return cls(None, allow=False)

    @classmethod
    def for_status(cls, status, body=b''):
        """The rules implied by fetching robots.txt: `status` is None if it failed."""
        if status is None or status == 429 or status >= 500:
            return cls.disallow_all()
        if status >= 300:
            return cls.allow_all()
        return cls.parse(body)

    def allowed(self, url, user_agent):
        """True if robots.txt lets `user_agent` fetch the absolute `url`."""
        if self._text is None:
            return self._allow
        if url.split('?', 1)[0] == robots_url(url):
            return True  # RFC 9309 2.2.2: /robots.txt is implicitly allowed
        token = product_token(user_agent)
        return self._parser(token).can_fetch(url, token)

    def crawl_delay(self, user_agent, max_delay=DEFAULT_MAX_CRAWL_DELAY):
        """Seconds between requests asked of `user_agent`, at most `max_delay`; or None."""
        if self._text is None:
            return None
        token = product_token(user_agent)
        delay = self._parser(token).crawl_delay(token)
        if delay is None or math.isnan(delay) or math.isinf(delay) or delay < 0:
            return None
        return min(delay, max_delay)

    def sitemaps(self):
        """The URLs of the ``Sitemap:`` lines, as written (they belong to no group)."""
        if self._text is None:
            return []
        return list(self._parser(_OTHER_AGENT).sitemaps)

    def _parser(self, token):
        parser = self._parsers.get(token)
        if parser is None:
            text = _USER_AGENT_LINE_RE.sub(lambda match: _rename_group(match, token),
                                           self._text)
            parser = self._parsers[token] = Protego.parse(text)
        return parser


def _rename_group(match, token):
    """A User-agent line kept for '*' and `token`, renamed to a name no token has else."""
    name = match.group(2).strip()
    if name != '*' and product_token(name) != token:
        name = _OTHER_AGENT
    return match.group(1) + name
