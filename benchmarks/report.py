"""Medians, ranges, ratios and the tables run.py prints, from the measurements' JSON reports.

Ratios are always peer / tinytornado over medians of seconds or megabytes, so a ratio above
1 means tinytornado is faster (or smaller) in every column.
"""
from __future__ import absolute_import, division, print_function

import json

import specs

__all__ = ['median', 'summarize', 'format_tables', 'disagreements']

NOT_AVAILABLE = 'not available'
FAILED = 'FAILED'
# Growth below this is allocator noise (arenas already mapped), not the workload's memory.
MEMORY_FLOOR_MB = 1.0


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def _per_op(workload, params, report):
    """The displayed figure of one run: op/s for rate workloads, else microseconds per op."""
    ops = specs.ops_count(workload, params, report['result'])
    if workload.rate:
        return ops / report['seconds']
    return report['seconds'] * 1e6 / ops


def summarize(workload, params, reports):
    """One implementation's runs -> medians and ranges, or a status string."""
    if any('error' in r for r in reports):
        return FAILED
    if not reports or any('unavailable' in r for r in reports):
        return NOT_AVAILABLE
    figures = [_per_op(workload, params, r) for r in reports]
    return {
        'figure': median(figures), 'low': min(figures), 'high': max(figures),
        'seconds': median([r['seconds'] for r in reports]),
        'cpu_seconds': median([r['cpu_seconds'] for r in reports]),
        'peak_mb': median([r['rss_peak_kb'] / 1024 for r in reports]),
        'growth_mb': median([(r['rss_peak_kb'] - r['rss_base_kb']) / 1024 for r in reports]),
    }


def _number(value):
    if value >= 100:
        return '%.0f' % value
    if value >= 10:
        return '%.1f' % value
    return '%.2f' % value


def _ratio(summaries, peer, field, floor=0):
    """peer / tinytornado of `field`; '-' when either is missing or not above `floor`."""
    tiny, other = summaries.get('tinytornado'), summaries.get(peer)
    if not isinstance(tiny, dict) or not isinstance(other, dict):
        return '-'
    if tiny[field] <= floor or other[field] <= floor:
        return '-'
    return '%.2fx' % (other[field] / tiny[field])


def _table(header, rows, markdown=False):
    if markdown:
        lines = [header, ['---'] * len(header)] + rows
        return '\n'.join('| ' + ' | '.join(row) + ' |' for row in lines)
    widths = [max(len(row[i]) for row in [header] + rows) for i in range(len(header))]
    lines = []
    for row in [header, ['-' * w for w in widths]] + rows:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append('  '.join(cells))
    return '\n'.join(lines)


def _label(workload, params):
    sizes = ' '.join('%s=%s' % (k, '{:,}'.format(v)) for k, v in sorted(params.items())
                     if isinstance(v, int))
    return '%s (%s) %s' % (workload.title, sizes, workload.unit)


def _cell(summary, cell):
    return summary if not isinstance(summary, dict) else cell(summary)


def format_tables(rows, implementations, markdown=False):
    """rows: [(workload, params, {implementation: summary})] -> the printed tables."""
    peers = [i for i in implementations if i != 'tinytornado']
    ratio_header = ['vs ' + p for p in peers]
    timing, cpu, memory = [], [], []
    for workload, params, summaries in rows:
        label = _label(workload, params)
        timing.append([label] + [
            _cell(summaries[i], lambda s: '%s [%s-%s]' % (
                _number(s['figure']), _number(s['low']), _number(s['high'])))
            for i in implementations] + [_ratio(summaries, p, 'seconds') for p in peers])
        cpu.append([workload.key] + [
            _cell(summaries[i], lambda s: '%.3f' % s['cpu_seconds'])
            for i in implementations] + [_ratio(summaries, p, 'cpu_seconds') for p in peers])
        memory.append([workload.key] + [
            _cell(summaries[i], lambda s: '%s (+%s)' % (_number(s['peak_mb']),
                                                       _number(s['growth_mb'])))
            for i in implementations] + [_ratio(summaries, p, 'growth_mb', MEMORY_FLOOR_MB) for p in peers])
    return '\n\n'.join([
        'Median [min-max] over rounds; ratio = peer / tinytornado '
        'median seconds (>1: tinytornado faster)',
        _table(['workload'] + implementations + ratio_header, timing, markdown),
        'CPU seconds of the process (median); ratio = peer / tinytornado',
        _table(['workload'] + implementations + ratio_header, cpu, markdown),
        'Peak RSS MB (+ growth during the run), median; ratio = peer / tinytornado growth',
        _table(['workload'] + implementations + ratio_header, memory, markdown),
    ])


def disagreements(reports):
    """Implementations whose results differ from the others' (the self-check across peers)."""
    results = {}
    for name, runs in reports.items():
        for run in runs:
            if 'result' in run:
                results.setdefault(json.dumps(run['result']), set()).add(name)
    if len(results) <= 1:
        return []
    return ['%s -> %s' % (', '.join(sorted(names)), result)
            for result, names in sorted(results.items())]
