"""current_user, get_current_user and @authenticated with the login_url setting, as
Tornado 5.1 has them, served by AsyncHTTPTestCase."""
from __future__ import absolute_import, division, print_function

from tinytornado.testing import AsyncHTTPTestCase, ExpectLog
from tinytornado.web import Application, RequestHandler, authenticated


class UserHandler(RequestHandler):
    asked = []

    def get_current_user(self):
        self.asked.append(1)
        return self.get_cookie('user')

    @authenticated
    def get(self):
        self.write('hello %s %s' % (self.current_user, self.current_user))

    @authenticated
    def post(self):
        self.write('posted')


class AssignedHandler(RequestHandler):
    def prepare(self):
        self.current_user = 'assigned'

    @authenticated
    def get(self):
        self.write(self.current_user)


class AuthTest(AsyncHTTPTestCase):
    login_url = '/login'

    def get_app(self):
        settings = {'login_url': self.login_url} if self.login_url else {}
        return Application([('/user', UserHandler), ('/assigned', AssignedHandler)],
                           **settings)

    def test_a_user_gets_through_and_is_asked_for_once(self):
        UserHandler.asked = []
        response = self.fetch('/user', headers={'Cookie': 'user=ann'})
        self.assertEqual(response.body, b'hello ann ann')
        self.assertEqual(UserHandler.asked, [1])

    def test_nobody_is_sent_to_log_in_with_next(self):
        response = self.fetch('/user?a=1', follow_redirects=False)
        self.assertEqual(response.code, 302)
        self.assertEqual(response.headers['Location'], '/login?next=%2Fuser%3Fa%3D1')

    def test_nobody_may_not_post(self):
        with ExpectLog('tornado.access', '.*', required=False):
            self.assertEqual(self.fetch('/user', method='POST', body=b'').code, 403)
        self.assertEqual(self.fetch('/user', method='POST', body=b'',
                                    headers={'Cookie': 'user=ann'}).body, b'posted')

    def test_current_user_may_be_assigned(self):
        self.assertEqual(self.fetch('/assigned').body, b'assigned')


class AbsoluteLoginTest(AuthTest):
    login_url = 'https://login.example.com/in'

    def test_nobody_is_sent_to_log_in_with_next(self):
        response = self.fetch('/user', follow_redirects=False)
        self.assertEqual(response.headers['Location'],
                         'https://login.example.com/in?next=' +
                         ('http%%3A%%2F%%2F127.0.0.1%%3A%d%%2Fuser' % self.get_http_port()))


class QueryLoginTest(AuthTest):
    login_url = '/login?from=app'

    def test_nobody_is_sent_to_log_in_with_next(self):
        response = self.fetch('/user', follow_redirects=False)
        self.assertEqual(response.headers['Location'], '/login?from=app')


class NoLoginUrlTest(AuthTest):
    login_url = None

    def test_nobody_is_sent_to_log_in_with_next(self):
        with ExpectLog('tornado.application', 'Uncaught exception'):
            self.assertEqual(self.fetch('/user', follow_redirects=False).code, 500)
