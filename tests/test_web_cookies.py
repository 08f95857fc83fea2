"""Cookies of tinytornado.web: set_cookie/get_cookie/clear_cookie through a real server,
and secure cookies in Tornado 5.1's signed-value formats, checked against values real
Tornado 5.1.1 made (and against an installed Tornado when there is one)."""
from __future__ import absolute_import, division, print_function

import pytest

from tinytornado._signedvalue import (
    create_signed_value, decode_signed_value, get_signature_key_version,
)
from tinytornado.escape import json_decode, to_unicode
from tinytornado.log import gen_log
from tinytornado.testing import AsyncHTTPTestCase, ExpectLog
from tinytornado.web import Application, RequestHandler

CLOCK = lambda: 1500000000  # noqa: E731 -- the timestamp the reference values were made at
# Made by Tornado 5.1.1's web.create_signed_value at CLOCK, under 2.7.
TORNADO_VALUES = [
    (('secret', 'user', u'caf\u00e9|1'), {},
     b'2|1:0|10:1500000000|4:user|12:Y2Fmw6l8MQ==|'
     b'b4667b2ddc68985123252018448eff5753ac212743d35a5cb2ffc4c8cd5e3338'),
    (({0: 'a', 3: 'secret3'}, 'user', 'v'), {'key_version': 3},
     b'2|1:3|10:1500000000|4:user|4:dg==|'
     b'c5110f3a7ea823e559c4266cd51c1f634966e1c3258adbd8fe4777c449839281'),
    (('secret', 'user', 'old'), {'version': 1},
     b'b2xk|1500000000|73892716debda54c01e56ed0663806a03061d389'),
]


@pytest.mark.parametrize('args, kwargs, expected', TORNADO_VALUES)
def test_signed_values_are_tornado_5_1s(args, kwargs, expected):
    assert create_signed_value(*args, clock=CLOCK, **kwargs) == expected
    secret, name, value = args
    assert decode_signed_value(secret, name, expected, clock=CLOCK) == (
        value.encode('utf-8') if not isinstance(value, bytes) else value)


def test_signed_values_verify_with_an_installed_tornado():
    tornado_web = pytest.importorskip('tornado.web', reason='no Tornado installed to check '
                                      'against (the reference values above still are)')
    theirs = tornado_web.create_signed_value('s3cret', 'name', 'value')
    ours = create_signed_value('s3cret', 'name', 'value')
    assert decode_signed_value('s3cret', 'name', theirs) == b'value'
    assert tornado_web.decode_signed_value('s3cret', 'name', ours) == b'value'


def test_a_forged_or_misnamed_or_expired_value_is_refused():
    value = create_signed_value('secret', 'user', 'bob', clock=CLOCK)
    assert decode_signed_value('other', 'user', value, clock=CLOCK) is None
    assert decode_signed_value('secret', 'admin', value, clock=CLOCK) is None
    assert decode_signed_value('secret', 'user', value.replace(b'Ym9i', b'ZXZl'),
                               clock=CLOCK) is None
    later = lambda: CLOCK() + 32 * 86400  # noqa: E731
    assert decode_signed_value('secret', 'user', value, clock=later) is None
    assert decode_signed_value('secret', 'user', value, clock=later, max_age_days=40) == b'bob'
    assert decode_signed_value('secret', 'user', b'2|garbage', clock=CLOCK) is None
    assert decode_signed_value('secret', 'user', None) is None


def test_version_1_values_are_read_unless_min_version_2():
    value = TORNADO_VALUES[2][2]
    assert decode_signed_value('secret', 'user', value, clock=CLOCK, min_version=2) is None
    with ExpectLog(gen_log, 'Invalid cookie signature'):
        assert decode_signed_value('other', 'user', value, clock=CLOCK) is None


def test_key_versions_pick_the_secret():
    secrets = {0: 'a', 3: 'secret3'}
    value = TORNADO_VALUES[1][2]
    assert get_signature_key_version(value) == 3
    assert decode_signed_value({3: 'secret3'}, 'user', value, clock=CLOCK) == b'v'
    assert decode_signed_value({0: 'a'}, 'user', value, clock=CLOCK) is None
    assert get_signature_key_version(TORNADO_VALUES[2][2]) is None
    with pytest.raises(ValueError):
        create_signed_value(secrets, 'user', 'v', version=1)
    with pytest.raises(ValueError):
        create_signed_value('secret', 'user', 'v', version=3)


class SetHandler(RequestHandler):
    def get(self):
        self.set_cookie('plain', 'p1', httponly=True, secure=False, max_age=60)
        self.set_cookie('scoped', 's', domain='example.com', path='/x', expires_days=2)
        self.set_secure_cookie('signed', u'caf\u00e9')
        self.write('set')


class ReadHandler(RequestHandler):
    def get(self):
        self.write({'plain': self.get_cookie('plain'), 'absent': self.get_cookie('no', 'd'),
                    'signed': to_unicode(self.get_secure_cookie('signed')),
                    'forged': self.get_secure_cookie('plain'),
                    'names': sorted(self.cookies)})


class ClearHandler(RequestHandler):
    def get(self):
        self.clear_cookie('plain')
        self.clear_all_cookies(path='/all')


class KeptOnErrorHandler(RequestHandler):
    def get(self):
        self.set_cookie('kept', 'yes')
        raise ValueError('after the cookie')


class NoSecretHandler(RequestHandler):
    def get(self):
        try:
            self.set_secure_cookie('x', 'y')
        except Exception as e:
            self.write(str(e))


class BadCookieHandler(RequestHandler):
    def get(self):
        self.set_cookie('bad', 'a b')


class CookieTest(AsyncHTTPTestCase):
    def get_app(self):
        return Application([('/set', SetHandler), ('/read', ReadHandler),
                            ('/clear', ClearHandler), ('/kept', KeptOnErrorHandler),
                            ('/bad', BadCookieHandler)], cookie_secret='s3cret')

    def test_set_cookie_attributes(self):
        cookies = self.fetch('/set').headers.get_list('Set-Cookie')
        assert len(cookies) == 3
        plain, scoped, signed = sorted(cookies)
        assert plain.startswith('plain=p1;') and 'httponly' in plain.lower()
        assert 'Max-Age=60' in plain and 'Path=/' in plain and 'secure' not in plain.lower()
        assert 'Domain=example.com' in scoped and 'Path=/x' in scoped and 'expires=' in scoped
        assert signed.startswith('signed="2|1:0|10:') or signed.startswith('signed=2|1:0|10:')

    def test_cookies_read_back(self):
        headers = self.fetch('/set').headers.get_list('Set-Cookie')
        cookie = '; '.join(header.split(';')[0] for header in headers)
        body = json_decode(self.fetch('/read', headers={'Cookie': cookie}).body)
        assert body == {'plain': 'p1', 'absent': 'd', 'signed': u'caf\u00e9', 'forged': None,
                        'names': ['plain', 'scoped', 'signed']}

    def test_clear_cookie_expires_it(self):
        cookies = self.fetch('/clear', headers={'Cookie': 'plain=1; other=2'}).headers
        cleared = cookies.get_list('Set-Cookie')
        # An empty value: quoted ("") on 3.x, bare on 2.7, as each SimpleCookie writes it.
        empty = lambda name, c: c.split(';')[0] in (name + '=', name + '=""')  # noqa: E731
        assert any(empty('plain', c) and 'Path=/all' in c and 'expires=' in c for c in cleared)
        assert any(empty('other', c) and 'expires=' in c for c in cleared)

    def test_cookies_survive_send_error(self):
        with ExpectLog('tornado.application', 'Uncaught exception'):
            response = self.fetch('/kept')
        assert response.code == 500 and 'kept=yes' in response.headers['Set-Cookie']

    def test_an_invalid_cookie_value_is_refused(self):
        with ExpectLog('tornado.application', 'Uncaught exception'):
            assert self.fetch('/bad').code == 500


class NoSecretTest(AsyncHTTPTestCase):
    def get_app(self):
        return Application([('/', NoSecretHandler)])

    def test_secure_cookies_need_the_setting(self):
        assert self.fetch('/').body == (b"You must define the 'cookie_secret' setting in "
                                        b"your application to use secure cookies")
