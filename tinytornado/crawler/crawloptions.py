"""Every option of the crawler, declared once: the Python API's, the command line's, the docs'.

`OPTIONS` lists each option with its default, its type, its help and what it takes part
in: a `Crawler` keyword (``api``), the command line's flags (``cli``), the journal of a
resumable crawl (``journaled``: the options that shape what a crawl fetches, and how
politely, which a resume takes back and refuses to see contradicted; ``resumed_path``: a
file a resume writes to again unless given another), the checks of a number's range
(``limits``) and of a file's access (``file_access``), and the options it needs
(``requires``) or cannot go with (``excludes``). From it are made: `DEFAULT_OPTIONS` and
`check_crawler_options` (the keywords `Crawler` takes), `OptionValues` (every option's
value), `add_arguments` (argparse), `JOURNALED_OPTIONS`, `NUMBER_LIMITS` and
`FILE_OPTIONS` (usage's checks), `option_mistake` (the ranges, requires and excludes, for
the Python API and the command line alike), and `markdown_table` (docs/crawler-options.md,
which a test keeps current).

A mistake in the options is a `ConfigurationError`, a ValueError whose message names the
options as the Python API does; `describe(naming)` names them as another caller does (the
command line's `application.usage.CommandLineNaming`: flags), so both say the same thing.

The command line's help of an option with a default ends with it, as ``(default N)``.
"""
from __future__ import absolute_import, division, print_function

import collections
import math
import numbers
import operator
import os

__all__ = ['Option', 'OPTIONS', 'DEFAULT_OPTIONS', 'JOURNALED_OPTIONS', 'NUMBER_LIMITS',
           'FILE_OPTIONS', 'RESUMED_PATHS', 'COMMAND_LINE_JOURNALED', 'USER_AGENT',
           'OptionValues', 'check_crawler_options', 'limit_mistake', 'combination_mistake',
           'option_mistake', 'ConfigurationError', 'MissingRequirement', 'Exclusion',
           'OutOfRange', 'FileRefused', 'Naming', 'API_NAMING',
           'add_arguments', 'markdown_table']

USER_AGENT = 'tinycrawl/0.1 (+https://github.com/tinytornado)'

# The value types: how argparse reads them, and how the docs name them.
INT, FLOAT, BOOL, TEXT, REGEXES, FILE, OBJECT = (
    'int', 'float', 'bool', 'text', 'regexes', 'file', 'object')
_ARGPARSE_TYPES = {INT: int, FLOAT: float}


class Option(object):
    """One option; see the module docstring.

    `cli` is None (no flag), a flag or a tuple of flags (``('-v', '--verbose')``) that set
    the value, or, for a bool with several flags, a list of (flag, the value it sets, its
    help). `metavar` names the value in the help.

    An option is set when its value is true (not None, False, 0 or empty). Set, it needs
    each option of `requires` set too (`why`, if given, says why: ``crawl_id names a crawl
    in Redis: it needs redis``), and none of `excludes` (`clash` says how the two clash;
    by default they "contradict each other: give one").
    """
    __slots__ = ('name', 'default', 'type', 'help', 'cli', 'metavar', 'api', 'journaled',
                 'resumed_path', 'limits', 'file_access', 'requires', 'why', 'excludes',
                 'clash')

    def __init__(self, name, default, type, help, cli=None, metavar=None, api=True,
                 journaled=False, resumed_path=False, limits=(), file_access=None,
                 requires=(), why=None, excludes=(), clash=None):
        self.name = name
        self.default = default
        self.type = type
        self.help = help
        self.cli = cli
        self.metavar = metavar
        self.api = api
        self.journaled = journaled
        self.resumed_path = resumed_path
        self.limits = limits  # (relation, bound) pairs: the value must be `relation` `bound`
        self.file_access = file_access  # os.access mode a file option's path needs
        self.requires = requires
        self.why = why
        self.excludes = excludes
        self.clash = clash


_AT_LEAST_0 = (('at least', 0),)
_AT_LEAST_1 = (('at least', 1),)
_POSITIVE = (('more than', 0),)

# In the order of the command line's help; the options of the Python API alone come last.
OPTIONS = (
    Option('demo', False, BOOL, 'serve a generated site on 127.0.0.1 and crawl it (no '
           'network needed); the default when no URL is given', cli='--demo', api=False,
           journaled=True),
    Option('demo_pages', 200, INT, 'pages of the demo site', cli='--demo-pages',
           metavar='N', api=False, journaled=True, limits=_AT_LEAST_1),
    Option('demo_seed', 0, INT, 'seed of the demo site', cli='--demo-seed', metavar='N',
           api=False, journaled=True),
    Option('demo_port', 0, INT, 'port (default: any)', cli='--demo-port', metavar='PORT',
           api=False, journaled=True, limits=(('at least', 0), ('at most', 65535))),
    Option('max_tasks', 10, INT, 'requests in flight at once (default %(default)s)',
           cli='--max-tasks', metavar='N', limits=_AT_LEAST_1),
    Option('max_redirect', 10, INT, 'redirects followed from one link (default %(default)s)',
           cli='--max-redirect', metavar='N', journaled=True, limits=_AT_LEAST_0),
    Option('max_tries', 4, INT, 'tries of a URL that fails in a way that may pass '
           '(default %(default)s)', cli='--max-tries', metavar='N', journaled=True,
           limits=_AT_LEAST_1),
    Option('strict', True, BOOL, "True: only the roots' exact hosts; False (lenient): their "
           "registered domains and subdomains too. Either way every port and scheme of a "
           "host in scope is in scope: http://example.com/ admits https://example.com:8443/",
           journaled=True, cli=[
               ('--lenient', False, "also crawl the roots' registered domains and their "
                                    "subdomains"),
               ('--strict', True, "only crawl the roots' exact hosts, on any port and "
                                  "scheme (the default)")]),
    Option('include', None, REGEXES, 'only crawl URLs matching one', cli='--include',
           metavar='REGEX', journaled=True),
    Option('exclude', None, REGEXES, "don't crawl URLs matching one", cli='--exclude',
           metavar='REGEX', journaled=True),
    Option('max_pages', None, INT, 'take in at most N URLs', cli='--max-pages', metavar='N',
           journaled=True, limits=_AT_LEAST_1),
    Option('max_depth', None, INT, 'follow at most N links from a root', cli='--max-depth',
           metavar='N', journaled=True, limits=_AT_LEAST_0),
    Option('max_per_host', 2, INT, 'requests in flight to one host', cli='--max-per-host',
           metavar='N', journaled=True, limits=_AT_LEAST_1),
    Option('delay', None, FLOAT, 'fixed seconds between two requests to one host (default: '
           "adapted to the host's latency, AutoThrottle's rule; robots.txt's Crawl-delay "
           'wins)', cli='--delay', metavar='SECONDS', journaled=True, limits=_AT_LEAST_0),
    Option('max_rate', 5.0, FLOAT, 'the most requests per second to one host, whatever '
           'the delay rule says (a ceiling; 0: none) (default %(default)s)', cli='--max-rate',
           metavar='N', journaled=True, limits=_AT_LEAST_0),
    Option('target_concurrency', 1.0, FLOAT, 'the adapted delay aims at N requests in '
           'flight per host, one every latency/N seconds', cli='--target-concurrency',
           metavar='N', journaled=True, limits=_POSITIVE),
    Option('start_delay', 1.0, FLOAT, 'the adapted delay of a host before its first answer',
           cli='--start-delay', metavar='SECONDS', journaled=True, limits=_AT_LEAST_0),
    Option('min_delay', 0.0, FLOAT, 'the shortest adapted delay', cli='--min-delay',
           metavar='SECONDS', journaled=True, limits=_AT_LEAST_0),
    Option('max_delay', 10.0, FLOAT, 'the longest adapted delay', cli='--max-delay',
           metavar='SECONDS', journaled=True, limits=_AT_LEAST_0),
    Option('obey_robots', True, BOOL, 'read and obey robots.txt', journaled=True,
           cli=[('--no-robots', False, 'ignore robots.txt')]),
    Option('user_agent', USER_AGENT, TEXT, 'the User-Agent header, and the name looked up '
           'in robots.txt', cli='--user-agent', metavar='TEXT', journaled=True),
    Option('max_crawl_delay', 10.0, FLOAT, 'cap on robots.txt Crawl-delay (default '
           '%(default)s)', cli='--max-crawl-delay', metavar='SECONDS', journaled=True,
           limits=_AT_LEAST_0),
    Option('connect_timeout', 10.0, FLOAT, 'to open a connection', cli='--connect-timeout',
           metavar='SECONDS', limits=_POSITIVE),
    Option('request_timeout', 30.0, FLOAT, 'for a whole request', cli='--request-timeout',
           metavar='SECONDS', limits=_POSITIVE),
    Option('max_body_size', 10 * 1024 * 1024, INT, 'a longer body fails its URL',
           cli='--max-body-size', metavar='BYTES', journaled=True, limits=_AT_LEAST_0),
    Option('download_non_html', True, BOOL, 'True: download the bodies that are not HTML '
           'too; False: stop at their headers',
           journaled=True, cli=[('--skip-non-html', False, "don't download bodies that are "
                                                           "not HTML past their headers")]),
    Option('frames', False, BOOL, 'follow <frame> and <iframe> too', cli='--frames',
           journaled=True),
    Option('sitemaps', False, BOOL, "also crawl the pages listed in the roots' sitemaps "
           '(robots.txt, /sitemap.xml)', cli='--sitemaps', journaled=True),
    Option('hashed_seen', False, BOOL, 'keep the seen set as 64-bit URL hashes (less '
           'memory)', cli='--hashed-seen'),
    Option('output', None, FILE, 'write one JSON line per URL as it finishes',
           cli='--output', metavar='FILE', resumed_path=True, file_access=os.W_OK),
    Option('summary', None, FILE, 'write a JSON summary at the end', cli='--summary',
           metavar='FILE', api=False, resumed_path=True, file_access=os.W_OK),
    Option('report', None, FILE, 'write an HTML report at the end: statuses, charts, '
           'largest pages, broken links and their referrers, redirect chains',
           cli='--report', metavar='FILE.html', api=False, resumed_path=True,
           file_access=os.W_OK),
    Option('link_check', False, BOOL, 'list the broken in-scope links and the pages linking '
           'to them at the end; exit 1 if there is one', cli='--link-check', api=False),
    Option('warc', None, FILE, 'archive every request and response, as on the wire, in a '
           'WARC/1.1 file, gzip per record (name it .warc.gz)', cli='--warc',
           metavar='FILE', resumed_path=True, file_access=os.W_OK),
    Option('state', None, FILE, 'keep a journal (SQLite) to resume from', cli='--state',
           metavar='FILE', file_access=os.R_OK | os.W_OK),
    Option('resume', False, BOOL, 'go on with the crawl journaled in --state, with its URLs '
           'and options', cli='--resume', requires=('state',)),
    Option('redis', None, TEXT, 'share the crawl with other processes, on any machine, '
           'through the Redis at URL (redis://HOST:PORT/DB): the first one starts it with '
           'its URLs and options, the others join it and take them',
           cli='--redis', metavar='URL', requires=('crawl_id',), excludes=('state', 'resume'),
           clash="contradict each other: a shared crawl keeps its work in Redis, not in a "
                 "journal"),
    Option('crawl_id', None, TEXT, 'the name of the crawl in --redis', cli='--crawl-id',
           metavar='NAME', requires=('redis',), why='names a crawl in Redis'),
    Option('redis_wait', 600.0, FLOAT, 'with --redis, and for --collect and --status: how '
           'long to wait for a Redis that cannot be reached (stopped, restarting, loading a '
           'large append-only file), trying again with back-off, before giving up (exit 4); '
           'the wait is said on stderr', cli='--redis-wait', metavar='SECONDS',
           limits=_AT_LEAST_0),
    Option('verbose', False, BOOL, 'print a line per URL as it finishes',
           cli=('-v', '--verbose'), api=False),
    Option('quiet', False, BOOL, 'only errors in the log', cli=('-q', '--quiet'), api=False,
           excludes=('verbose',)),
    Option('no_progress', False, BOOL, 'no progress line on stderr, nor the line of the '
           'politeness in force at the start', cli='--no-progress',
           api=False),
    # Several processes and machines over one crawl on Redis (collect.py, workers.py).
    Option('lease_seconds', 60.0, FLOAT, 'with --redis: how long a URL stays with this '
           'process unless renewed (a killed process\'s URLs come back after it, each '
           'hand-out counted as a try); a URL in flight has its lease renewed, however '
           'slow its fetch', cli='--lease-seconds',
           metavar='SECONDS', limits=_POSITIVE),
    Option('join_timeout', 60.0, FLOAT, 'with --redis and no URL: how long to wait for '
           'another process to start the crawl --crawl-id before giving up with exit '
           'status 2; a process with no URL never starts a crawl', cli='--join-timeout',
           metavar='SECONDS', api=False, limits=_AT_LEAST_0),
    Option('workers', 0, INT, 'start N worker processes of this command line (each with '
           'its own --output FILE.1, FILE.2...), forward Ctrl-C to them, exit with the '
           'worst status; 0: crawl in this process', cli='--workers', metavar='N',
           api=False, limits=_AT_LEAST_0, requires=('redis', 'crawl_id'),
           excludes=('collect', 'status'), clash='go separately'),
    Option('collect', None, FILE, "write the --redis crawl's results, one JSON line per URL, "
           'to FILE until the crawl is over; run again after a kill, it goes on where it '
           'stopped (its place is kept in FILE.position)', cli='--collect', metavar='FILE',
           api=False, file_access=os.R_OK | os.W_OK, requires=('redis', 'crawl_id'),
           excludes=('status',), clash='go separately'),
    Option('status', False, BOOL, "show the progress of the whole --redis crawl and exit",
           cli='--status', api=False, requires=('redis', 'crawl_id')),
    # Issue 27's options (the command line's): certificates, and links out of scope.
    Option('insecure', False, BOOL, "don't verify the sites' TLS certificates (a self-signed "
           'test site); without it a certificate that fails is final for its host: not '
           'retried, the host\'s other URLs left unchecked', cli='--insecure'),
    Option('check_external', False, BOOL, 'once the crawl is over, check each link out of '
           'scope once (HEAD, or GET where HEAD is refused; one request at a time per host, '
           '--delay or 1 s apart) and list the broken ones with their referrers; exit 1 if '
           'there is one. Off by default, with --link-check too, as LinkChecker\'s '
           '--check-extern: it sends requests to sites that are not yours',
           cli='--check-external', api=False),
    Option('ca_file', None, FILE, 'trust the certificate authorities in this PEM file '
           "instead of the system's", cli='--ca-file', metavar='FILE.pem',
           file_access=os.R_OK),
    Option('backoff', 1.0, FLOAT, 'first pause of a failing host, in seconds; it doubles '
           'with each failure in a row', journaled=True),
    Option('max_backoff', 60.0, FLOAT, 'the longest pause of a failing host',
           journaled=True),
    Option('max_retry_after', 300.0, FLOAT, 'the longest Retry-After honoured',
           journaled=True),
    Option('max_host_failures', 30, INT, 'failures in a row before a host is given up',
           journaled=True),
    Option('keep_statistics', True, BOOL, 'keep every FetchStatistic in `done` (the '
           'command line keeps only the totals)'),
    Option('on_statistic', None, OBJECT, 'called with each FetchStatistic as it finishes'),
    Option('on_links', None, OBJECT, 'called with (url, its links the crawl takes) per page'),
    Option('on_written_links', None, OBJECT, 'called with (url, its http(s) hrefs as written, '
           '`links.WrittenLink`s, malformed ones too) per HTML page, before on_links'),
    Option('on_external_links', None, OBJECT, 'called with (url, the http(s) URLs out of '
           'scope it links to) per page with some'),
    Option('outputs', (), OBJECT, 'more outputs (`outputs.Output`), told of each URL after '
           'the crawl\'s own'),
    Option('http_client', None, OBJECT, "an AsyncHTTPClient (default: one of the crawl's "
           'own)'),
)

# Every option of `Crawler`, with its default (read when a Crawler is made).
DEFAULT_OPTIONS = collections.OrderedDict(
    (option.name, option.default) for option in OPTIONS if option.api)

# The journaled options of `Crawler`, which its work store keeps; and those of the command
# line alone (the demo site's), which it keeps in the journal itself.
JOURNALED_OPTIONS = tuple(option.name for option in OPTIONS if option.journaled and option.api)
COMMAND_LINE_JOURNALED = tuple(option.name for option in OPTIONS
                               if option.journaled and not option.api)

# The files a crawl writes, which a resume writes to again unless given others.
RESUMED_PATHS = tuple(option.name for option in OPTIONS if option.resumed_path)

# (name, relation, bound): a number option's value must be `relation` `bound`.
NUMBER_LIMITS = tuple((option.name, relation, bound) for option in OPTIONS
                      for relation, bound in option.limits)

# (name, the access its path needs): the options that name a file the crawl writes.
FILE_OPTIONS = tuple((option.name, option.file_access) for option in OPTIONS
                     if option.file_access is not None)

_RELATIONS = {'at least': operator.ge, 'more than': operator.gt, 'at most': operator.le}


def limit_mistake(name, value, relation, bound):
    """What is wrong with `value` for number option `name` and one of its limits, as an
    `OutOfRange` error, or None. A value that is not a number is left to whatever else
    reads it."""
    if value is None or isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    if math.isnan(value) or math.isinf(value):
        return OutOfRange(name, value, None, None)
    if not _RELATIONS[relation](value, bound):
        return OutOfRange(name, value, relation, bound)
    return None


class OptionValues(object):
    """The value of every option of `OPTIONS` (the command line's too) for one crawl, as
    attributes: ``options.max_tasks``. A name the table lacks is an AttributeError,
    reading and setting alike; an option not given has its default (a `Crawler`
    option's in `DEFAULT_OPTIONS`, read when the values are made)."""
    __slots__ = tuple(option.name for option in OPTIONS)

    def __init__(self, values=()):
        for option in OPTIONS:
            setattr(self, option.name, DEFAULT_OPTIONS.get(option.name, option.default))
        for name, value in dict(values).items():
            setattr(self, name, value)

    def as_dict(self):
        """{name: value} of every option."""
        return dict((name, getattr(self, name)) for name in self.__slots__)

    def __eq__(self, other):
        return isinstance(other, OptionValues) and self.as_dict() == other.as_dict()

    def __ne__(self, other):
        return not self == other

    __hash__ = None  # mutable

    def __repr__(self):
        return 'OptionValues(%r)' % (self.as_dict(),)


class Naming(object):
    """How a message names an option: as the Python API does (this class); the command
    line's (`application.usage.CommandLineNaming`) uses its flags."""

    def option(self, name):
        """The option itself: 'crawl_id' ('--crawl-id')."""
        return name

    def needed(self, name):
        """The option as something to give: 'redis' ('--redis URL')."""
        return name

    def setting(self, name, value):
        """The option set to `value`: 'max_depth=3' ('--max-depth 3'); name 'roots': the
        roots."""
        if name == 'roots':
            return 'roots %r' % (value,)
        return '%s=%r' % (name, value)

    def contradiction(self, name, given, stored, whose):
        """`given` contradicts `stored`, the value of `name` in `whose` configuration."""
        verb = 'contradict' if name == 'roots' else 'contradicts'
        return '%s %s %s %s' % (self.setting(name, given), verb, whose,
                                self.setting(name, stored))

    def source(self, source, label):
        """Where a crawl is kept: `label` ('resume', 'crawl NAME'); the command line
        names option `source` ('--resume', '--redis')."""
        return label


API_NAMING = Naming()


class ConfigurationError(ValueError):
    """A mistake in a crawl's options; the message names them as the Python API does,
    `describe(naming)` as `naming` does."""

    def __init__(self, *parts):
        self.parts = parts
        ValueError.__init__(self, self.describe(API_NAMING))

    def describe(self, naming):
        raise NotImplementedError()


class MissingRequirement(ConfigurationError):
    """Option `name` is set without all of the options it requires."""

    def describe(self, naming):
        name, needed, why = self.parts
        needs = ' and '.join(naming.needed(other) for other in needed)
        if why:
            return '%s %s: it needs %s' % (naming.option(name), why, needs)
        return '%s needs %s' % (naming.option(name), needs)


class OutOfRange(ConfigurationError):
    """Number option `name` is out of its range (`relation` None: not a finite number)."""

    def describe(self, naming):
        name, value, relation, bound = self.parts
        if relation is None:
            return '%s must be a finite number (got %s)' % (naming.option(name), value)
        return '%s must be %s %s (got %s)' % (naming.option(name), relation, bound, value)


class FileRefused(ConfigurationError):
    """The file of option `name` at `path` cannot be used: `reason` (an error, or text)."""

    def describe(self, naming):
        name, path, reason = self.parts
        return '%s %s: %s' % (naming.option(name), path,
                              getattr(reason, 'strerror', None) or reason)


class Exclusion(ConfigurationError):
    """Options `name` and `other` are both set, and cannot be."""

    def describe(self, naming):
        name, other, clash = self.parts
        return '%s and %s %s' % (naming.option(name), naming.option(other),
                                 clash or 'contradict each other: give one')


def combination_mistake(values):
    """The first requirement or exclusion of the table that `values` (an OptionValues)
    break, as a `ConfigurationError`, or None. The table is read from its end, so that
    an option that needs others is named before those it needs (``--collect needs
    --redis URL and --crawl-id NAME``, rather than ``--redis`` needing ``--crawl-id``)."""
    for option in reversed(OPTIONS):
        if not getattr(values, option.name):
            continue
        if not all(getattr(values, other) for other in option.requires):
            return MissingRequirement(option.name, option.requires, option.why)
        for other in option.excludes:
            if getattr(values, other):
                return Exclusion(option.name, other, option.clash)
    return None


def check_crawler_options(options):
    """Refuse (TypeError) the names in `options`, given to `Crawler`, that are not its."""
    unknown = set(options) - set(DEFAULT_OPTIONS)
    if unknown:
        raise TypeError('unknown Crawler options: %s' % ', '.join(sorted(unknown)))


def option_mistake(values):
    """The first mistake of `values` (an OptionValues) against the table, as a
    `ConfigurationError`, or None: a requirement or exclusion broken
    (`combination_mistake`), then a number out of its range."""
    mistake = combination_mistake(values)
    for name, relation, bound in NUMBER_LIMITS:
        if mistake is not None:
            break
        mistake = limit_mistake(name, getattr(values, name), relation, bound)
    return mistake


def add_arguments(add):
    """Add every option with flags to an argparse parser through `add`, its
    `add_argument` (or a wrapper of it)."""
    for option in OPTIONS:
        if isinstance(option.cli, list):
            _add_switches(add, option)
        elif option.cli is not None:
            _add_argument(add, option)


def _add_switches(add, option):
    """A bool's flags, each setting the value it names; the first carries the default."""
    for index, (flag, value, text) in enumerate(option.cli):
        extra = {'default': option.default} if index == 0 else {}
        add(flag, dest=option.name, action='store_true' if value else 'store_false',
            help=text, **extra)


def _add_argument(add, option):
    flags = option.cli if isinstance(option.cli, tuple) else (option.cli,)
    if option.type == BOOL:
        add(*flags, action='store_true', help=option.help)
        return
    kwargs = dict(metavar=option.metavar, help=option.help)
    if option.type == REGEXES:
        kwargs['action'] = 'append'
    if option.default is not None:
        kwargs['default'] = option.default
    if option.type in _ARGPARSE_TYPES:
        kwargs['type'] = _ARGPARSE_TYPES[option.type]
    add(*flags, **kwargs)


def markdown_table():
    """The options as a Markdown table: docs/crawler-options.md's body. The help of a bool
    set by flags ends with what each flag does, so that a flag that turns the value off
    (``--skip-non-html``) does not read as the value's own help."""
    lines = ['| option | flags | type | default | help | journaled | range | needs; excludes |',
             '| --- | --- | --- | --- | --- | --- | --- | --- |']
    for option in OPTIONS:
        lines.append('| %s |' % ' | '.join([
            '`%s`' % option.name if option.api else '(command line)',
            _flags_text(option), option.type, _default_text(option),
            _help_text(option).replace('|', '\\|'),
            'yes' if option.journaled else 'its path' if option.resumed_path else '',
            ', '.join('%s %s' % limit for limit in option.limits),
            _combination_text(option)]))
    return '\n'.join(lines) + '\n'


def _combination_text(option):
    parts = []
    if option.requires:
        parts.append(', '.join('`%s`' % name for name in option.requires))
    if option.excludes:
        parts.append('not ' + ', '.join('`%s`' % name for name in option.excludes))
    return '; '.join(parts)


def _help_text(option):
    text = option.help.replace(' (default %(default)s)', '')
    if isinstance(option.cli, list):
        text += ' (%s)' % '; '.join('`%s`: %s' % (flag, flag_help)
                                    for flag, _, flag_help in option.cli)
    return text


def _flags_text(option):
    if option.cli is None:
        return ''
    if isinstance(option.cli, list):
        return ', '.join('`%s`' % flag for flag, _, _ in option.cli)
    flags = option.cli if isinstance(option.cli, tuple) else (option.cli,)
    suffix = ' %s' % option.metavar if option.metavar else ''
    return ', '.join('`%s%s`' % (flag, suffix) for flag in flags)


def _default_text(option):
    if option.default is None or option.default == ():
        return ''
    return '`%r`' % (option.default,)
