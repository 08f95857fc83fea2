from __future__ import absolute_import, division, print_function

import io
import os
import platform
import re

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

here = os.path.dirname(os.path.abspath(__file__))
with io.open(os.path.join(here, 'tinytornado', '__init__.py'), encoding='utf-8') as f:
    version = re.search(r"^version = '([^']+)'", f.read(), re.M).group(1)
with io.open(os.path.join(here, 'README.rst'), encoding='utf-8') as f:
    long_description = f.read()

class optional_build_ext(build_ext):
    """Builds gen's C speedups (the coroutine wrapper) where it can.
    Without a C compiler the install goes on and gen.py runs its pure-Python twin; TINYTORNADO_EXTENSION=1 makes a failed
    build an error. (2.7's distutils has no Extension(optional=True).)"""

    def run(self):
        try:
            build_ext.run(self)
        except Exception as e:
            self._skip(e)

    def build_extension(self, ext):
        try:
            build_ext.build_extension(self, ext)
        except Exception as e:
            self._skip(e)

    reported = False

    def _skip(self, error):
        if os.environ.get('TINYTORNADO_EXTENSION') == '1':
            raise error
        if not self.reported:  # A failed compile also fails the copy that follows it.
            self.reported = True
            print('tinytornado: the C speedups were not built (%s); the pure-Python code '
                  'works the same, slower.' % (error,))


# The Redis client's C parser (tinytornado.crawler.resp; without it, ours in Python).
# 1.1 is the last for 2.7 and 2.0 the last for 3.6; both have manylinux wheels.
hiredis = [
    'hiredis>=1.1,<2; python_version < "3"',
    'hiredis>=2.0,<2.1; python_version >= "3" and python_version < "3.7"',
    'hiredis>=2.0; python_version >= "3.7"',
]

extensions = []
if platform.python_implementation() == 'CPython':
    extensions.append(Extension('tinytornado._speedups', ['tinytornado/_speedups.c']))

setup(
    name='tinytornado',
    version=version,
    description='Tornado-style yield coroutines, an IOLoop and a web crawler, '
                'on Python 2.7 and 3.6+',
    long_description=long_description,
    packages=find_packages(include=['tinytornado', 'tinytornado.*']),
    # AsyncHTTPSTestCase's self-signed certificate.
    package_data={'tinytornado': ['testdata/test.crt', 'testdata/test.key']},
    ext_modules=extensions,
    cmdclass={'build_ext': optional_build_ext},
    python_requires='>=2.7, !=3.0.*, !=3.1.*, !=3.2.*, !=3.3.*, !=3.4.*, !=3.5.*',
    install_requires=[
        'six>=1.12',  # six.ensure_str
        'backports_abc>=0.5',
        'selectors2>=2.0; python_version < "3"',
        'monotonic>=1.5; python_version < "3"',
        'futures>=3.2; python_version < "3"',
        # The crawler: robots.txt rules (Scrapy's parser; 0.2 is the last for 2.7 and 3.6)
        # and the Public Suffix List shipped offline, for lenient host matching.
        'protego>=0.2.1,<0.3; python_version < "3.7"',
        'protego>=0.2.1; python_version >= "3.7"',
        'publicsuffixlist>=0.9,<1; python_version < "3"',
        'publicsuffixlist>=0.9; python_version >= "3"',
        # tinycrawl --warc: WARC records written (and read back by its tests) with warcio,
        # pure Python on six; 1.8 imports datetime.timezone, so 1.7.4 is 2.7's last.
        'warcio>=1.7.4,<1.7.5; python_version < "3"',
        'warcio>=1.7.4; python_version >= "3"',
    ],
    extras_require={
        'redis': hiredis,
        # The peers benchmarks/run.py compares with (nginx and wrk come from apt).
        'bench': [
            'tornado==5.1.1; python_version < "3"',
            'tornado>=6; python_version >= "3"',
            'aiohttp>=3.7; python_version >= "3.6"',
            'uvloop>=0.14; python_version >= "3.6" and sys_platform != "win32"',
        ],
        'test': [
            'pytest>=4.6,<5; python_version < "3"',
            'pytest>=6,<7.1; python_version >= "3" and python_version < "3.7"',
            'pytest>=6; python_version >= "3.7"',
            # The TLS tests make a CA and certificates at run time (3.3 is 2.7's last).
            'cryptography<3.4; python_version < "3"',
            'cryptography; python_version >= "3"',
            # The reference our HTTP/1.1 parser is tested against (a differential test).
            # 0.11 is the last series for 2.7, 0.14 for 3.6 and 3.7.
            'h11>=0.11,<0.12; python_version < "3"',
            'h11>=0.13,<0.15; python_version >= "3" and python_version < "3.8"',
            'h11>=0.16; python_version >= "3.8"',
            # AsyncIOLoop's tests also run on uvloop's loop where it installs.
            'uvloop; python_version >= "3.7" and sys_platform != "win32"',
        ] + hiredis,  # the Redis tests run both parsers, hiredis's and ours
    },
    entry_points={
        # The plugin's name must be its module's name: tests/conftest.py also lists it.
        'pytest11': ['tinytornado.pytest_plugin = tinytornado.pytest_plugin'],
        'console_scripts': ['tinycrawl = tinytornado.crawler.application.cli:main'],
    },
    classifiers=[
        'Programming Language :: Python :: 2.7',
        'Programming Language :: Python :: 3',
        'License :: OSI Approved :: Apache Software License',
    ],
)
