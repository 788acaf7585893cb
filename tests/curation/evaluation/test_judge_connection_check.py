"""Issue 31: "Test connection" on a judge endpoint's page sends one small
request through the SSRF-guarded client and says what happened; "remove
the key" is offered only once a key exists."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse

from curation.evaluation.judge_client import CONNECTION_CHECK_PROMPT
from curation.evaluation.judge_runs import save_endpoint
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db
KEY = "sk-check-secret-123"


class TinyChat:
    """An OpenAI-style server answering "OK" to the right key and model."""

    def __init__(self):
        self.bodies: list[dict] = []
        chat = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                chat.bodies.append(body)
                if self.headers.get("Authorization") != f"Bearer {KEY}":
                    status, answer = 401, {"error": {"message": "Incorrect API key provided"}}
                elif body["model"] != "judge-1":
                    status, answer = 404, {"error": {"message": "The model does not exist"}}
                else:
                    status, answer = 200, {"choices": [{"message": {"content": "OK"}}]}
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def chat():
    with TinyChat() as server:
        yield server


def endpoint(project, admin, base_url, *, model="judge-1", key=KEY, name="local"):
    return save_endpoint(
        project=project, actor=admin, name=name, base_url=base_url, model=model,
        temperature=None, max_tokens=512, timeout_seconds=5, api_key=key,
    )  # fmt: skip


def check(client, project, e):
    url = reverse("judge_endpoint_check", args=[project.slug, e.pk])
    response = client.post(url, follow=True)
    assert response.redirect_chain[-1][0].endswith(f"/judges/{e.pk}/")
    return [str(m) for m in response.context["messages"]], response.content.decode()


def test_test_connection_reports_success_a_bad_key_and_a_missing_model(client, settings, chat):
    settings.JUDGE_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    project = make_project()
    admin = make_member(project, role="admin")
    client.force_login(admin)
    good = endpoint(project, admin, chat.base_url)
    page = client.get(reverse("judge_endpoint_edit", args=[project.slug, good.pk]))
    assert "Test connection" in page.content.decode()

    messages, html = check(client, project, good)
    assert len(messages) == 1 and messages[0].startswith("Connected to local in ")
    assert "The model answered 'OK'" in messages[0]
    assert chat.bodies[-1]["messages"] == [{"role": "user", "content": CONNECTION_CHECK_PROMPT}]
    assert chat.bodies[-1]["max_tokens"] == 16

    bad_key = endpoint(project, admin, chat.base_url, key="sk-wrong", name="wrong key")
    messages, html = check(client, project, bad_key)
    assert "HTTP 401: Incorrect API key provided" in messages[0]
    assert "sk-wrong" not in html

    no_model = endpoint(project, admin, chat.base_url, model="nope", name="no model")
    messages, _ = check(client, project, no_model)
    assert "HTTP 404: The model does not exist" in messages[0]
    assert len(chat.bodies) == 3  # one request each, no retry


def test_test_connection_goes_through_the_address_guard(client, settings, chat):
    settings.JUDGE_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    project = make_project()
    admin = make_member(project, role="admin")
    client.force_login(admin)
    e = endpoint(project, admin, chat.base_url)
    settings.JUDGE_ALLOWED_NETWORKS = []  # the setting changed after it was saved
    messages, _ = check(client, project, e)
    assert "loopback" in messages[0] and "did not answer as a judge" in messages[0]
    assert chat.bodies == []  # nothing was sent


def test_test_connection_is_for_admins_only(client, settings, chat):
    settings.JUDGE_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    project = make_project()
    admin = make_member(project, role="admin")
    e = endpoint(project, admin, chat.base_url)
    client.force_login(make_member(project, role="curator"))
    url = reverse("judge_endpoint_check", args=[project.slug, e.pk])
    assert client.post(url).status_code == 403
    assert chat.bodies == []


def test_remove_key_is_offered_only_when_a_key_is_stored(client, settings, chat):
    settings.JUDGE_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    project = make_project()
    admin = make_member(project, role="admin")
    client.force_login(admin)
    new = client.get(reverse("judge_endpoints", args=[project.slug])).content.decode()
    assert "clear_api_key" not in new and "Remove the stored API key" not in new
    keyless = endpoint(project, admin, chat.base_url, key="")
    url = reverse("judge_endpoint_edit", args=[project.slug, keyless.pk])
    html = client.get(url).content.decode()
    assert "clear_api_key" not in html and "Remove the stored API key" not in html
    with_key = endpoint(project, admin, chat.base_url, name="keyed")
    html = client.get(reverse("judge_endpoint_edit", args=[project.slug, with_key.pk])).content
    assert b'name="clear_api_key"' in html
