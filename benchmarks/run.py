"""Run the issue-8 workloads on tinytornado and its peers, interleaved, and print the tables.

    python benchmarks/run.py [--quick] [--only W1,W3] [--rounds N] [--json FILE] [--markdown]

Every measurement runs in a fresh interpreter (measure.py). Rounds interleave the
implementations A B C A B C, so drift in the machine's load spreads over all of them. Exits
with status 1, after printing what it has, when any implementation failed its self-check or
the implementations disagree on a result.
"""
from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import subprocess
import sys

import machine
import report
import specs
from common import Unavailable

__all__ = ['IMPLEMENTATIONS', 'main']

IMPLEMENTATIONS = ['tinytornado', 'asyncio', 'uvloop', 'tornado']
# Python 2 has no asyncio, so its table compares tinytornado with Tornado 5.1.1 only.
DEFAULT_IMPLEMENTATIONS = IMPLEMENTATIONS if sys.version_info[0] >= 3 else ['tinytornado',
                                                                            'tornado']
HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true', help='smaller sizes, 3 rounds')
    parser.add_argument('--only', help='comma-separated workload prefixes, e.g. W1,W3')
    parser.add_argument('--rounds', type=int, help='rounds per workload (default 5, quick 3)')
    parser.add_argument('--implementations', default=','.join(DEFAULT_IMPLEMENTATIONS),
                        help='comma-separated subset of %s' % ','.join(IMPLEMENTATIONS))
    parser.add_argument('--json', help='also write every measurement to this file')
    parser.add_argument('--markdown', action='store_true', help='tables as Markdown')
    parser.add_argument('--render', metavar='FILE',
                        help='print the tables of a --json file instead of measuring')
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = 3 if args.quick else 5
    return args


def measure_once(workload, implementation, params, expected):
    """Run measure.py in a fresh interpreter; its JSON report, or an error report."""
    command = [sys.executable, os.path.join(HERE, 'measure.py'), workload.key,
               implementation, json.dumps(params), json.dumps(expected)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = child.communicate()
    lines = out.decode('utf-8', 'replace').strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        return {'error': 'measure.py exited %s with no report:\n%s%s' % (
            child.returncode, out.decode('utf-8', 'replace'), err.decode('utf-8', 'replace'))}


def run_rounds(workload, params, expected, implementations, rounds):
    """{implementation: [report per round]}, interleaving implementations in each round."""
    reports = dict((name, []) for name in implementations)
    for round_number in range(rounds):
        for name in implementations:
            if reports[name] and 'unavailable' in reports[name][0]:
                continue  # it will not appear between rounds
            result = measure_once(workload, name, params, expected)
            reports[name].append(result)
            _log_progress(workload, name, round_number, result)
    return reports


def _log_progress(workload, name, round_number, result):
    if 'seconds' in result:
        status = '%.3f s' % result['seconds']
    else:
        status = result.get('unavailable') or 'FAILED'
    sys.stderr.write('  %s round %d %-12s %s\n' % (workload.key, round_number + 1, name, status))
    if 'error' in result:
        sys.stderr.write(result['error'] + '\n')


def run_workload(workload, args, implementations):
    """(params, reports, disagreements, notes) of one workload, over all rounds."""
    params = dict(workload.quick if args.quick else workload.full)
    if workload.function == 'w6_crawl':
        return run_crawl(workload, params, args.rounds, implementations)
    expected = workload.expected(params)
    reports = run_rounds(workload, params, expected, implementations, args.rounds)
    return params, reports, report.disagreements(reports), []


def run_crawl(workload, params, rounds, implementations):
    """W6: the crawlers against one nginx, each expected to fetch the site's URL set."""
    import crawl_site  # only W6 needs the site generator and nginx
    try:
        with crawl_site.served_site(params['pages']) as server:
            crawl_params = {'root_url': server.root_url, 'workers': params['workers']}
            reports = run_rounds(workload, crawl_params, server.expected, implementations,
                                 rounds)
            notes = [crawl_site.wrk_note(server, params['workers'])]
    except Unavailable as exc:
        reports = dict((name, [{'unavailable': str(exc)}]) for name in implementations)
        notes = ['W6 not run: %s' % exc]
    return params, reports, report.disagreements(reports), notes


def render(path, markdown):
    """Print the tables of a run saved with --json."""
    with open(path) as saved:
        run = json.load(saved)
    keyed = dict((w.key, w) for w in specs.WORKLOADS)
    rows = []
    for measured in run['measurements']:
        workload = keyed[measured['workload']]
        rows.append((workload, measured['params'], dict(
            (name, report.summarize(workload, measured['params'], reports))
            for name, reports in measured['reports'].items())))
    print(run['machine'] + '\n')
    print(report.format_tables(rows, run['implementations'], markdown))
    if run['notes']:
        print('\n' + '\n'.join(run['notes']))
    return 0


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    if args.render:
        return render(args.render, args.markdown)
    implementations = [i for i in args.implementations.split(',') if i]
    print(machine.describe())
    rows, problems, measurements, notes = [], [], [], []
    for workload in specs.select(args.only):
        sys.stderr.write('%s: %s\n' % (workload.key, workload.title))
        params, reports, disagreeing, workload_notes = run_workload(workload, args,
                                                                    implementations)
        notes.extend(workload_notes)
        summaries = dict((name, report.summarize(workload, params, reports[name]))
                         for name in implementations)
        rows.append((workload, params, summaries))
        measurements.append({'workload': workload.key, 'params': params, 'reports': reports})
        problems.extend('%s: results differ: %s' % (workload.key, d) for d in disagreeing)
        problems.extend('%s: %s failed its self-check' % (workload.key, name)
                        for name in implementations if summaries[name] == report.FAILED)
    print()
    print(report.format_tables(rows, implementations, args.markdown))
    if notes:
        print('\n' + '\n'.join(notes))
    if args.json:
        with open(args.json, 'w') as out:
            json.dump({'machine': machine.describe(), 'implementations': implementations,
                       'measurements': measurements, 'notes': notes},
                      out, indent=1, sort_keys=True)
    if problems:
        print('\nSELF-CHECK FAILED:\n  ' + '\n  '.join(problems))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
