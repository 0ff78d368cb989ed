"""An HTTP client for the console's tests that keeps cookies like a browser, never follows redirects
(the tests look at each one) and signs in through the form (tests/query/test_console_signin.py)."""

from __future__ import annotations

import base64
import http.client
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import pytest

from schemas.config import Settings


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: str

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    def cookie_line(self, name: str) -> str:
        return next((c for c in self.headers.get_all("Set-Cookie") or [] if c.startswith(f"{name}=")), "")


@dataclass
class Browser:
    """A client that keeps cookies and never follows redirects (the test looks at each one)."""
    port: int
    cookies: dict[str, str] = field(default_factory=dict)

    def request(self, method: str, path: str, form: dict[str, str] | None = None,
                basic: tuple[str, str] | None = None) -> Reply:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if basic is not None:
            headers["Authorization"] = "Basic " + base64.b64encode(":".join(basic).encode()).decode()
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        reply = Reply(response.status, response.headers, response.read().decode())
        connection.close()
        for line in reply.headers.get_all("Set-Cookie") or []:
            name, _, rest = line.partition("=")
            value = rest.split(";", 1)[0]
            if value in ("", '""') or "Max-Age=0" in line:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        return reply

    def get(self, path: str, **kw: Any) -> Reply:
        return self.request("GET", path, **kw)

    def post(self, path: str, form: dict[str, str], **kw: Any) -> Reply:
        return self.request("POST", path, form=form, **kw)

    def sign_in(self, user: str, password: str, target: str = "/console") -> Reply:
        form_page = self.get(f"/console/login?{urlencode({'next': target})}")
        assert form_page.status == 200, form_page.body
        return self.post("/console/login", {"csrf": csrf_of(form_page.body), "next": target, "user": user,
                                            "password": password})


def csrf_of(page: str) -> str:
    found = re.search(r"name=csrf value='([^']+)'", page)
    assert found, page
    return found.group(1)


@pytest.fixture
def browser(config: Settings) -> Browser:
    """A console client with no session yet (conftest's `config` names the stack)."""
    return Browser(config.http_port)
