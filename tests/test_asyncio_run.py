"""Legacy coroutines awaited from asyncio.run(); the cases live in asyncio_run_cases_py3.py,
which 2.7 cannot parse (``async def``)."""
from __future__ import absolute_import, division, print_function

import sys

import pytest

if sys.version_info < (3, 7):
    pytest.skip('asyncio.run() and get_running_loop() are Python 3.7+',
                allow_module_level=True)

pytest.register_assert_rewrite('asyncio_run_cases_py3')
from asyncio_run_cases_py3 import *  # noqa: E402,F401,F403
