"""The crawl's report as one self-contained HTML page (``tinycrawl --report FILE.html``).

`CrawlReport` is fed each `FetchStatistic` as it finishes (the Crawler's ``on_statistic``),
so it works on a crawl that keeps no statistics, in memory bounded whatever the crawl's
size: the finishing times in at most `max_buckets` buckets (their width grows as the
crawl goes on), a latency histogram of fixed bins, the `max_largest` largest pages; the
link checker (`linkcheck.LinkChecker`) behind it keeps the referrers, redirects and broken
URLs. The counts by status come from the crawl's `CrawlStatistics` at the end.

The page needs nothing from outside: CSS in a ``<style>``, charts as inline SVG (each bar's
``<title>`` shows its value on hover), and a short script that makes the tables sortable by
a click on their headers; the data is in the HTML, never in the script, so every URL and
message is escaped once, as HTML text.
"""
from __future__ import absolute_import, division, print_function

import bisect
import heapq
import io
import time

from tinytornado._compat import binary_type, text_type
from tinytornado.ioloop import IOLoop

from .linkcheck import as_written
from ..urls import is_http_url

__all__ = ['CrawlReport', 'Timeline', 'LATENCY_BOUNDS', 'TIMELINE_WIDTHS', 'bar_chart',
           'escape_html']

# Upper bounds (seconds) of the latency histogram's bins; the last bin has none.
LATENCY_BOUNDS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
# The widths of the timeline's buckets, in seconds, as a crawl goes on.
TIMELINE_WIDTHS = (0.1, 0.2, 1.0, 2.0, 10.0, 20.0, 60.0, 120.0, 600.0, 1200.0, 3600.0)
MAX_ROWS = 500  # rows of a table; the rest are counted under it


def escape_html(value):
    """`value` as HTML text, safe in an element or a quoted attribute."""
    if isinstance(value, binary_type):
        value = value.decode('utf-8', 'replace')
    return (text_type(value).replace(u'&', u'&amp;').replace(u'<', u'&lt;')
            .replace(u'>', u'&gt;').replace(u'"', u'&quot;').replace(u"'", u'&#39;'))


class Timeline(object):
    """How many events happened in each interval of `width` seconds since the start.

    At most `max_buckets` buckets: when an event falls past the last, neighbouring buckets
    merge and the width grows to the next of TIMELINE_WIDTHS (then doubles), each a
    multiple of the one before so that merged buckets count exactly.
    """

    def __init__(self, max_buckets=120):
        self.max_buckets = max_buckets
        self.width = TIMELINE_WIDTHS[0]
        self.counts = []

    def add(self, seconds):
        """Count one event `seconds` after the start."""
        index = int(seconds / self.width)  # not //: 0.5 // 0.1 is 4.0
        while index >= self.max_buckets:
            self._widen()
            index = int(seconds / self.width)
        if index >= len(self.counts):
            self.counts.extend([0] * (index + 1 - len(self.counts)))
        self.counts[index] += 1

    def _widen(self):
        wider = [width for width in TIMELINE_WIDTHS if width > self.width]
        width = wider[0] if wider else self.width * 2
        factor = int(round(width / self.width))
        counts = self.counts
        self.counts = [sum(counts[i:i + factor]) for i in range(0, len(counts), factor)]
        self.width = width

    def rates(self):
        """Events per second in each bucket."""
        return [count / self.width for count in self.counts]


class CrawlReport(object):
    """The data of the HTML report, collected as the crawl goes.

    Args:
        link_checker: the crawl's `LinkChecker`, fed by the Crawler too.
        clock: a function giving the time in seconds (default: the current IOLoop's).
        title: what was crawled, in words ('the demo site: 200 generated pages'), for
            the page's title and header (default: the roots).
    """

    def __init__(self, link_checker, clock=None, max_buckets=120, max_largest=10,
                 title=None):
        self.link_checker = link_checker
        self.title = title
        self.clock = clock or IOLoop.current().time
        self.started = self.clock()
        self.timeline = Timeline(max_buckets)
        self.latencies = [0] * (len(LATENCY_BOUNDS) + 1)
        self.max_largest = max_largest
        self._largest = []  # a heap of (size, url, status, content_type): smallest first

    def add_statistic(self, statistic):
        """Count one finished URL (the Crawler's ``on_statistic``)."""
        self.timeline.add(self.clock() - self.started)
        if statistic.status is None:
            return  # no response: no latency, no size
        self.latencies[bisect.bisect_left(LATENCY_BOUNDS, statistic.elapsed)] += 1
        entry = (statistic.size, statistic.url, statistic.status, statistic.content_type)
        if len(self._largest) < self.max_largest:
            heapq.heappush(self._largest, entry)
        elif entry > self._largest[0]:
            heapq.heapreplace(self._largest, entry)

    def largest(self):
        """[(size, url, status, content_type)] of the largest pages, largest first."""
        return sorted(self._largest, reverse=True)

    def write(self, path, statistics, roots):
        """Write the page to `path` (UTF-8)."""
        with io.open(path, 'w', encoding='utf-8') as out:
            out.write(self.html(statistics, roots))

    def html(self, statistics, roots):
        """The page (text) for the crawl's `CrawlStatistics` and its `roots`."""
        broken = self.link_checker.broken_links(roots)
        sections = [
            _header(statistics, roots, self.title),
            _tiles(statistics, len(broken), len(self.link_checker.redirects)),
            _section('Status', _status_bars(statistics)),
            _section('Pages per second', self._timeline_chart()),
            _section('Latency', self._latency_chart()),
            _section('Largest pages', _largest_table(self.largest())),
            _section('Broken links', _broken_table(broken)),
            _section('Unchecked links', _unchecked_table(self.link_checker.unchecked)),
            _section('Redirect chains', _chains_table(self.link_checker.redirect_chains())),
        ]
        return _PAGE % {'title': escape_html('Crawl report: ' + (self.title or ' '.join(roots))),
                        'style': _STYLE, 'script': _SCRIPT, 'body': u'\n'.join(sections)}

    def _timeline_chart(self):
        width = self.timeline.width
        labels = [u'%gs' % (index * width) for index in range(len(self.timeline.counts))]
        return bar_chart(self.timeline.rates(), labels, u'pages/s',
                         u'URLs finished per second, in intervals of %g s' % width)

    def _latency_chart(self):
        return bar_chart(self.latencies, _latency_labels(), u'URLs',
                         u'Time to the response, URLs that got one')


def _latency_labels():
    return ([u'\u2264 ' + _seconds(bound) for bound in LATENCY_BOUNDS] +
            [u'> ' + _seconds(LATENCY_BOUNDS[-1])])


def _seconds(value):
    return u'%gms' % (value * 1000) if value < 1 else u'%gs' % value


# -- the page -------------------------------------------------------------------------

def _section(title, body):
    slug = title.lower().replace(' ', '-')
    return u'<section id="%s"><h2>%s</h2>\n%s\n</section>' % (slug, escape_html(title), body)


def _header(statistics, roots, title):
    state = u' <span class="badge bad">interrupted</span>' if statistics.interrupted else u''
    if title:
        state += u': ' + escape_html(title)
    ended = statistics.finished or time.time()
    return (u'<header><h1>Crawl report%s</h1><p>%s</p><p class="muted">%s, %.1f s</p>'
            u'</header>' % (state, u' '.join(_link(root) for root in roots),
                            escape_html(time.ctime(ended)), statistics.elapsed()))


def _tiles(statistics, broken, redirects):
    counts = statistics.categories
    elapsed = statistics.elapsed()
    tiles = [
        (u'URLs', u'%d' % statistics.urls, u''),
        (u'pages/s', u'%.1f' % (statistics.urls / elapsed if elapsed else 0.0), u''),
        (u'HTML pages', u'%d' % counts['html'], u''),
        (u'downloaded', _size(counts['html_bytes'] + counts['other_bytes']), u''),
        (u'redirects', u'%d' % redirects, u''),
        (u'errors', u'%d' % counts['fail'], u' bad' if counts['fail'] else u''),
        (u'broken links', u'%d' % broken, u' bad' if broken else u' good'),
        (u'unchecked', u'%d' % counts['unchecked'], u' bad' if counts['unchecked'] else u''),
    ]
    return u'<div class="tiles">%s</div>' % u''.join(
        u'<div class="tile%s"><b>%s</b><span>%s</span></div>' % (extra, value, name)
        for name, value, extra in tiles)


def _status_bars(statistics):
    """A bar per HTTP status, per error class, and for robots.txt's refusals."""
    rows = sorted((status, u'%d' % status, count)
                  for status, count in statistics.statuses.items())
    rows += sorted((1000, name, count) for name, count in statistics.failures.items())
    disallowed = statistics.categories['robots_disallowed']
    if disallowed:
        rows.append((1001, u'robots.txt disallowed', disallowed))
    if not rows:
        return u'<p class="muted">No URL finished.</p>'
    top = max(count for _, _, count in rows)
    lines = [u'<table class="bars">']
    for code, label, count in rows:
        lines.append(u'<tr><th>%s</th><td><div class="meter %s" style="width:%.1f%%"></div>'
                     u'</td><td class="num">%d</td></tr>' % (
                         escape_html(label), _status_class(code), 100.0 * count / top, count))
    lines.append(u'</table>')
    return u'\n'.join(lines)


def _status_class(code):
    if code >= 1000:
        return u'error'
    return u's%dxx' % (code // 100)


def bar_chart(values, labels, unit, caption):
    """An inline SVG bar chart: a bar per value, with its label and value on hover."""
    if not values or not any(values):
        return u'<p class="muted">Nothing to show.</p>'
    width, height, left, bottom, top_margin = 760.0, 220.0, 52.0, 24.0, 10.0
    plot_width, plot_height = width - left - 8, height - bottom - top_margin
    top = max(values)
    step = plot_width / len(values)
    parts = [u'<figure><svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s">'
             % (width, height, escape_html(caption))]
    for fraction in (0.0, 0.5, 1.0):
        y = top_margin + plot_height * (1 - fraction)
        parts.append(u'<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>'
                     u'<text class="axis" x="%.1f" y="%.1f" text-anchor="end">%s</text>'
                     % (left, width - 8, y, y, left - 6, y + 4, _number(top * fraction)))
    every = max(1, len(values) // 10)  # at most about 10 labels under the bars
    for index, (value, label) in enumerate(zip(values, labels)):
        bar_height = plot_height * value / top
        x = left + index * step
        parts.append(u'<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f">'
                     u'<title>%s: %s %s</title></rect>' % (
                         x + step * 0.1, top_margin + plot_height - bar_height, step * 0.8,
                         bar_height, escape_html(label), _number(value), escape_html(unit)))
        if index % every == 0:
            parts.append(u'<text class="axis" x="%.1f" y="%.1f" text-anchor="middle">%s'
                         u'</text>' % (x + step / 2, height - 6, escape_html(label)))
    parts.append(u'</svg><figcaption>%s</figcaption></figure>' % escape_html(caption))
    return u''.join(parts)


def _number(value):
    return u'%d' % value if value == int(value) else u'%.1f' % value


def _largest_table(largest):
    rows = [(_td(_size(size), size), _td(_link(url)), _td(status, status),
             _td(escape_html(content_type or u'')))
            for size, url, status, content_type in largest]
    headers = ((u'size', 10), (u'URL', 60), (u'status', 8), (u'type', 22))
    return _table(headers, rows, len(rows), u'No page.')


def _broken_table(broken):
    rows = []
    for link in broken[:MAX_ROWS]:
        problem = escape_html(link.problem)
        if len(link.chain) > 1:
            problem += u'<div class="chain">%s</div>' % _chain(link.chain)
        rows.append((_td(_link(link.url)), _td(problem, css=u'bad'),
                     _td(_referrers(link), link.referrer_count)))
    headers = ((u'link', 34), (u'status or error', 30), (u'linked from', 36))
    return _table(headers, rows, len(broken), u'No broken link.')


def _unchecked_table(unchecked):
    """The URLs never tried because their host was given up, with the reason."""
    urls = sorted(unchecked)
    rows = [(_td(_link(url)), _td(escape_html(unchecked[url]))) for url in urls[:MAX_ROWS]]
    headers = ((u'link', 50), (u'why it was not checked', 50))
    return _table(headers, rows, len(urls), u'Every link was checked.')


def _referrers(link):
    if not link.referrer_count:
        return u'<span class="muted">a root</span>'
    written = link.written or [None] * len(link.referrers)
    items = [u'<li>%s%s</li>' % (_link(url), escape_html(as_written(how)))
             for url, how in zip(link.referrers, written)]
    more = link.referrer_count - len(link.referrers)
    if more:
        items.append(u'<li class="muted">and %d more</li>' % more)
    return u'<ul>%s</ul>' % u''.join(items)


def _chains_table(chains):
    rows = [(_td(_link(chain[0].url)), _td(_chain(chain), len(chain) - 1))
            for chain in chains[:MAX_ROWS]]
    return _table(((u'start', 30), (u'chain', 70)), rows, len(chains), u'No redirect.')


def _chain(hops):
    return u' <span class="arrow">\u2192</span> '.join(
        _link(hop.url) + (u' <span class="status">%s</span>' % escape_html(hop.outcome)
                          if hop.outcome else u'')
        for hop in hops)


def _table(headers, rows, total, empty):
    """A sortable table; `headers` are (title, width in percent) pairs."""
    if not rows:
        return u'<p class="muted">%s</p>' % escape_html(empty)
    lines = [u'<table class="data"><thead><tr>%s</tr></thead><tbody>' % u''.join(
        u'<th style="width:%d%%">%s</th>' % (width, escape_html(title))
        for title, width in headers)]
    for row in rows:
        lines.append(u'<tr>%s</tr>' % u''.join(row))
    lines.append(u'</tbody></table>')
    if total > len(rows):
        lines.append(u'<p class="muted">and %d more, not shown</p>' % (total - len(rows)))
    return u'\n'.join(lines)


def _td(html, sort_value=None, css=None):
    """A table cell: its HTML, and the number to sort it by (else its text is used)."""
    attributes = u''
    if sort_value is not None:
        attributes += u' data-sort="%s"' % escape_html(sort_value)
    if css:
        attributes += u' class="%s"' % css
    return u'<td%s>%s</td>' % (attributes, html)


def _link(url):
    """A link to `url` if it is an http(s) URL, else its text: no javascript: hrefs."""
    text = escape_html(url)
    if not is_http_url(url):
        return u'<span class="url">%s</span>' % text
    return u'<a class="url" href="%s">%s</a>' % (text, text)


def _size(size):
    for unit in (u'B', u'kB', u'MB'):
        if size < 1000:
            return u'%s %s' % (_number(size), unit)
        size = size / 1000.0
    return u'%.1f GB' % size


_PAGE = u'''<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%(title)s</title>
<style>%(style)s</style>
</head>
<body>
%(body)s
<script>%(script)s</script>
</body>
</html>
'''

_STYLE = u'''
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1000px;
       padding: 1em 1.5em 3em; color: #1d2733; background: #f6f7f9; }
h1 { margin: .2em 0; } h2 { margin: 1.6em 0 .5em; font-size: 1.2em; }
section { background: #fff; border-radius: 8px; padding: .2em 1em 1em;
          box-shadow: 0 1px 3px rgba(0,0,0,.08); margin-top: 1em; }
.muted { color: #6b7785; }
.badge { font-size: .5em; vertical-align: middle; padding: .2em .6em; border-radius: 1em; }
.badge.bad { background: #fde2e1; color: #a61b1b; }
.tiles { display: flex; flex-wrap: wrap; gap: .6em; margin-top: 1em; }
.tile { background: #fff; border-radius: 8px; padding: .6em 1em; min-width: 7em;
        box-shadow: 0 1px 3px rgba(0,0,0,.08); }
.tile b { display: block; font-size: 1.6em; } .tile span { color: #6b7785; }
.tile.bad b { color: #c62828; } .tile.good b { color: #2e7d32; }
table { border-collapse: collapse; width: 100%; }
table.data th { text-align: left; border-bottom: 2px solid #d5dbe1; padding: .3em .5em;
                cursor: pointer; user-select: none; white-space: nowrap; }
table.data th.sorted-up::after { content: " \\25B2"; }
table.data th.sorted-down::after { content: " \\25BC"; }
table.data td { border-bottom: 1px solid #eceff2; padding: .3em .5em; vertical-align: top; }
td ul { margin: 0; padding-left: 1.1em; }
.url { word-break: break-all; } a { color: #1f5fa8; text-decoration: none; }
a:hover { text-decoration: underline; }
td.bad { color: #b71c1c; font-weight: 600; }
.chain { font-weight: normal; color: #1d2733; margin-top: .3em; }
.status { background: #eceff2; border-radius: 4px; padding: 0 .3em; font-size: .9em; }
.arrow { color: #6b7785; }
table.bars th { text-align: right; width: 14em; padding-right: .6em; font-weight: normal;
                white-space: nowrap; }
table.bars td { padding: .15em 0; } td.num { width: 5em; text-align: right; }
.meter { height: 1em; border-radius: 3px; min-width: 2px; }
div.s2xx { background: #43a047; } div.s3xx { background: #1e88e5; }
div.s4xx { background: #fb8c00; } div.s5xx { background: #e53935; }
div.s1xx { background: #8e99a4; } div.error { background: #6d4c41; }
svg.chart { width: 100%; height: auto; }
svg.chart rect.bar { fill: #1e88e5; } svg.chart rect.bar:hover { fill: #0d47a1; }
svg.chart .grid { stroke: #e3e7eb; } svg.chart .axis { font-size: 11px; fill: #6b7785; }
figure { margin: 0; } figcaption { color: #6b7785; font-size: .9em; }
'''

# Sorts a table by a click on a header: by data-sort when the cells have it, else by text.
_SCRIPT = u'''
(function () {
  function key(row, column) {
    var cell = row.cells[column];
    var sort = cell.getAttribute("data-sort");
    return sort === null ? cell.textContent.toLowerCase() : parseFloat(sort);
  }
  function sortBy(table, header, column) {
    var up = !header.classList.contains("sorted-up");
    var headers = table.tHead.rows[0].cells;
    for (var i = 0; i < headers.length; i++) {
      headers[i].classList.remove("sorted-up", "sorted-down");
    }
    header.classList.add(up ? "sorted-up" : "sorted-down");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a, column), y = key(b, column);
      return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1);
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  var tables = document.querySelectorAll("table.data");
  Array.prototype.forEach.call(tables, function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, column) {
      header.classList.add("sortable");
      header.title = "Sort by this column";
      header.addEventListener("click", function () { sortBy(table, header, column); });
    });
  });
})();
'''
