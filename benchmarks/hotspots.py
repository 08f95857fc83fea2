"""cProfile one workload on one implementation and print where the time goes.

    python benchmarks/hotspots.py W1-return [--impl tinytornado] [--quick] [--sort tottime]

The workload runs once unprofiled as a warm-up (W6: no warm-up, nginx serves the site), then
once under cProfile, with the same inputs and self-check as a measurement. cProfile inflates the cost of small functions, so
read the ranking, not the absolute times.
"""
from __future__ import absolute_import, division, print_function

import argparse
import cProfile
import pstats
import sys
import warnings

import measure
import specs

__all__ = ['main']


def profile_run(run, workload, params):
    run(**specs.make_inputs(workload, params))  # warm-up
    profiler = cProfile.Profile()
    result = profiler.runcall(run, **specs.make_inputs(workload, params))
    if result != workload.expected(params):
        raise SystemExit('%s returned %r, expected %r' % (
            workload.key, result, workload.expected(params)))
    return profiler


def profile_crawl(run, params):
    import crawl_site  # only W6 needs the site generator and nginx
    with crawl_site.served_site(params['pages']) as server:
        profiler = cProfile.Profile()
        result = profiler.runcall(run, server.root_url, params['workers'])
        if result != server.expected:
            raise SystemExit('W6 fetched %r, expected %r' % (result, server.expected))
    return profiler


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('workload', help='a workload key, e.g. W1-return, W2, W4')
    parser.add_argument('--impl', default='tinytornado')
    parser.add_argument('--quick', action='store_true')
    parser.add_argument('--sort', default='tottime', help='pstats sort key')
    parser.add_argument('--limit', type=int, default=20)
    args = parser.parse_args(argv)
    workload = [w for w in specs.WORKLOADS if w.key.upper() == args.workload.upper()][0]
    params = workload.quick if args.quick else workload.full
    warnings.simplefilter('ignore', DeprecationWarning)
    implementation = measure.make_implementation(args.impl)
    run = getattr(implementation, workload.function)
    if workload.function == 'w6_crawl':
        profiler = profile_crawl(run, params)
    else:
        profiler = profile_run(run, workload, params)
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.strip_dirs().sort_stats(args.sort).print_stats(args.limit)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
