"""Judge keys stay with the origin they were entered for, and judge requests
cannot be turned inward (SSRF): every address is checked, resolved by a stub
resolver here, so no test sends anything to another host than 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.urls import reverse

from curation.benchmarks.mrb import scoring_input
from curation.evaluation import judge_client
from curation.evaluation.forms import JudgeEndpointForm
from curation.evaluation.judge_runs import KEY_CLEARED_ADDRESS_CHANGED, run_judge
from curation.evaluation.key_encryption import KeyForAnotherOrigin, origin_of
from curation.models import AuditEvent, JudgeEndpoint, JudgeRunStatus
from tests.curation.evaluation.fake_openai import FakeJudge
from tests.curation.evaluation.test_judge_runner import API_KEY, MODEL, make_endpoint, start
from tests.curation.evaluation.test_judge_views import endpoint_post
from tests.curation.releases.test_releases import built, make_release_project
from tests.factories import make_member

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(tmp_path):
    return built(make_release_project(tmp_path, slug="jo"))


@pytest.fixture
def fake(release, settings):
    settings.JUDGE_BACKOFF_BASE = 0.01
    settings.JUDGE_MAX_RETRIES = 1
    records = scoring_input.load_release_records(Path(settings.MEDIA_ROOT) / release.folder)
    with FakeJudge(api_key=API_KEY, model=MODEL, records=records) as server:
        yield server
    assert server.problems == []


def stub_resolver(monkeypatch, answers: dict[str, list[str]]):
    """getaddrinfo answering `answers` (name -> addresses); any other name
    fails the test, so nothing is ever looked up for real."""
    asked = []

    def getaddrinfo(host, port, *args, **kwargs):
        asked.append(host)
        if host not in answers:
            raise AssertionError(f"unexpected lookup of {host}")
        out = []
        for address in answers[host]:
            if ":" in address:
                out.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0)))
            else:
                out.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)))
        return out

    monkeypatch.setattr(judge_client, "getaddrinfo", getaddrinfo)
    return asked


def no_connections(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a socket was opened to a refused address")

    monkeypatch.setattr(judge_client, "_open_socket", refuse)


def tiny_body():
    return {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}


# --- 1. Keys bound to their origin --------------------------------------------------


def test_changing_the_host_clears_the_key_and_the_page_says_so(client, release, fake):
    project = release.project
    client.force_login(make_member(project, role="admin"))
    endpoint = make_endpoint(release, fake)
    url = reverse("judge_endpoint_edit", args=[project.slug, endpoint.pk])
    moved = fake.base_url.replace("127.0.0.1", "localhost")  # same server, other origin
    response = client.post(url, endpoint_post(fake, base_url=moved, api_key=""), follow=True)
    assert response.status_code == 200
    assert "The stored API key was removed" in response.content.decode()
    endpoint.refresh_from_db()
    assert not endpoint.has_api_key and endpoint.api_key() == ""
    event = AuditEvent.objects.filter(action="judge_endpoint_changed").latest("pk")
    assert event.after["api_key_change"] == KEY_CLEARED_ADDRESS_CHANGED
    assert API_KEY not in json.dumps(event.before) + json.dumps(event.after)


@pytest.mark.parametrize(
    "change",
    [
        lambda u: u.replace("http://", "https://"),  # scheme
        lambda u: u.rsplit(":", 1)[0] + ":1/v1",  # port
        lambda u: u.replace("127.0.0.1", "127.0.0.2"),  # host
    ],
)
def test_any_change_of_scheme_host_or_port_clears_a_kept_key(
    client, settings, release, fake, change
):
    settings.JUDGE_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    project = release.project
    client.force_login(make_member(project, role="admin"))
    endpoint = make_endpoint(release, fake)
    url = reverse("judge_endpoint_edit", args=[project.slug, endpoint.pk])
    response = client.post(url, endpoint_post(fake, base_url=change(fake.base_url), api_key=""))
    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert not endpoint.has_api_key


def test_a_path_change_keeps_the_key_and_a_new_key_for_a_new_host_is_kept(client, release, fake):
    project = release.project
    client.force_login(make_member(project, role="admin"))
    endpoint = make_endpoint(release, fake)
    url = reverse("judge_endpoint_edit", args=[project.slug, endpoint.pk])
    same_origin = fake.base_url.replace("/v1", "/openai/v1")
    assert (
        client.post(url, endpoint_post(fake, base_url=same_origin, api_key="")).status_code == 302
    )
    endpoint.refresh_from_db()
    assert endpoint.api_key() == API_KEY
    moved = fake.base_url.replace("127.0.0.1", "localhost")
    client.post(url, endpoint_post(fake, base_url=moved, api_key="sk-for-the-new-host"))
    endpoint.refresh_from_db()
    assert endpoint.api_key() == "sk-for-the-new-host"


def test_a_key_moved_to_another_origin_behind_the_forms_back_never_leaves(release, fake):
    endpoint = make_endpoint(release, fake)
    moved = fake.base_url.replace("127.0.0.1", "localhost")
    JudgeEndpoint.objects.filter(pk=endpoint.pk).update(base_url=moved)
    endpoint.refresh_from_db()
    with pytest.raises(KeyForAnotherOrigin):
        endpoint.api_key()
    run = run_judge(run_id=start(release, endpoint).pk)
    assert run.status == JudgeRunStatus.FAILED and "another address" in run.error
    assert sum(fake.requests.values()) == 0


def test_origins_compare_scheme_host_and_port_with_default_ports_spelled_out():
    assert origin_of("https://API.example.com/v1") == origin_of("https://api.example.com:443/x")
    assert origin_of("http://example.com/v1") == "http://example.com:80"
    assert origin_of("http://[::1]:8000/v1") == "http://[::1]:8000"
    assert origin_of("https://example.com") != origin_of("http://example.com")


# --- 2. The outbound guard ------------------------------------------------------------

REFUSED = [
    "127.0.0.1",
    "127.1.2.3",
    "0.0.0.0",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "100.64.0.1",  # shared address space
    "169.254.169.254",  # AWS/GCP/Azure metadata
    "100.100.100.200",  # Alibaba metadata
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "192.0.2.10",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd00:ec2::254",  # AWS metadata over IPv6
    "ff02::1",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:169.254.169.254",
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
]


@pytest.mark.parametrize("address", REFUSED)
def test_internal_addresses_are_refused(address):
    assert judge_client.address_refusal(address) is not None


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_are_allowed(address):
    assert judge_client.address_refusal(address) is None


def test_allowed_networks_open_exactly_their_range():
    lan = judge_client.parse_networks(["10.0.0.0/8", "fd12::/16"])
    assert judge_client.address_refusal("10.1.2.3", lan) is None
    assert judge_client.address_refusal("::ffff:10.1.2.3", lan) is None
    assert judge_client.address_refusal("fd12::5", lan) is None
    assert judge_client.address_refusal("192.168.0.1", lan) == "private"
    assert judge_client.address_refusal("169.254.169.254", lan) == "link-local"


@pytest.mark.parametrize(
    "answers",
    [["169.254.169.254"], ["8.8.8.8", "10.0.0.7"], ["::ffff:127.0.0.1"], ["fd00:ec2::254"]],
)
def test_a_name_resolving_to_an_internal_address_is_refused_before_connecting(monkeypatch, answers):
    stub_resolver(monkeypatch, {"judge.example": answers})
    no_connections(monkeypatch)
    endpoint = judge_client.Endpoint(
        base_url="https://judge.example/v1", model=MODEL, api_key="sk-secret"
    )
    policy = judge_client.RetryPolicy(max_retries=3, backoff_base=0)
    with pytest.raises(judge_client.RefusedAddress, match=r"refused: judge\.example"):
        judge_client.judge(tiny_body(), endpoint, policy)


def test_the_address_actually_connected_to_is_checked(monkeypatch, fake):
    """The resolver says public, but the socket ends up at 127.0.0.1 (as a
    transparent redirection would): nothing is sent."""
    stub_resolver(monkeypatch, {"judge.example": ["8.8.8.8"]})
    port = int(fake.base_url.rsplit(":", 1)[1].split("/")[0])

    def elsewhere(family, sockaddr, timeout):
        assert sockaddr[0] == "8.8.8.8"  # the checked address is the one asked for
        return socket.create_connection(("127.0.0.1", port), timeout=timeout)

    monkeypatch.setattr(judge_client, "_open_socket", elsewhere)
    endpoint = judge_client.Endpoint(base_url=f"http://judge.example:{port}/v1", model=MODEL)
    with pytest.raises(judge_client.RefusedAddress, match="loopback"):
        judge_client.judge(tiny_body(), endpoint, judge_client.RetryPolicy(max_retries=0))
    assert sum(fake.requests.values()) == 0


def test_an_allowed_network_reaches_a_lan_judge_by_name(monkeypatch, release, fake):
    stub_resolver(monkeypatch, {"vllm.lan": ["127.0.0.1"]})
    endpoint = make_endpoint(release, fake)
    port = fake.base_url.rsplit(":", 1)[1]
    JudgeEndpoint.objects.filter(pk=endpoint.pk).update(base_url=f"http://vllm.lan:{port}")
    endpoint.refresh_from_db()
    endpoint.set_api_key(API_KEY)
    endpoint.save()
    run = run_judge(run_id=start(release, endpoint).pk)
    assert run.status == JudgeRunStatus.COMPLETE, run.error
    assert set(fake.requests.values()) == {1}


def test_a_run_against_an_internal_host_fails_without_a_request(
    monkeypatch, settings, release, fake
):
    endpoint = make_endpoint(release, fake)
    settings.JUDGE_ALLOWED_NETWORKS = []
    run = run_judge(run_id=start(release, endpoint).pk)
    assert run.status == JudgeRunStatus.FAILED
    assert "loopback" in run.error and "JUDGE_ALLOWED_NETWORKS" in run.error
    assert sum(fake.requests.values()) == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "http://localhost:8000/v1",
        "http://[::1]/v1",
        "http://169.254.169.254/latest",
        "http://[::ffff:10.0.0.1]/v1",
        "http://10.0.0.5:8000/v1",
    ],
)
def test_the_form_refuses_internal_addresses_unless_allowed(settings, url):
    data = {"name": "x", "base_url": url, "model": "m", "temperature": 0, "max_tokens": 5}
    data["timeout_seconds"] = 5
    settings.JUDGE_ALLOWED_NETWORKS = []
    form = JudgeEndpointForm(data)
    assert not form.is_valid() and "JUDGE_ALLOWED_NETWORKS" in str(form.errors["base_url"])
    settings.JUDGE_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1/128", "169.254.0.0/16", "10.0.0.0/8"]
    assert JudgeEndpointForm(data).is_valid()


# --- Bodies: capped, and never shown unless a JSON error ------------------------------


class Canned:
    """A one-answer HTTP server on 127.0.0.1."""

    def __init__(self, status: int, body: bytes, content_type="text/html", length=None):
        canned = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(length or len(body)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)
                canned.hits += 1

        self.hits = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def endpoint(self):
        port = self.server.server_address[1]
        return judge_client.Endpoint(
            base_url=f"http://127.0.0.1:{port}/v1",
            model=MODEL,
            api_key="sk-k",
            allowed_networks=("127.0.0.1/32",),
        )

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("status", [400, 401, 500])
def test_a_non_json_error_body_is_never_shown(status):
    server = Canned(status, b"<html>root:x:0:0 internal admin page</html>")
    try:
        with pytest.raises(judge_client.FatalEndpointError) if status == 401 else _nothing():
            result = judge_client.judge(
                tiny_body(), server.endpoint, judge_client.RetryPolicy(max_retries=0)
            )
            assert "internal admin page" not in result.error and f"HTTP {status}" in result.error
            assert "non-JSON body, not shown" in result.error
    finally:
        server.close()


def test_a_json_error_shows_its_message_only():
    body = json.dumps({"error": {"message": "image too large", "debug": "secret"}}).encode()
    server = Canned(400, body, "application/json")
    try:
        result = judge_client.judge(
            tiny_body(), server.endpoint, judge_client.RetryPolicy(max_retries=0)
        )
    finally:
        server.close()
    assert result.error.endswith("HTTP 400: image too large") and "secret" not in result.error


def test_an_oversized_answer_is_refused_unread():
    # Says it is 1 GiB; only the header is believed.
    server = Canned(200, b"{}", "application/json", length=2**30)
    try:
        result = judge_client.judge(
            tiny_body(), server.endpoint, judge_client.RetryPolicy(max_retries=0)
        )
    finally:
        server.close()
    assert "longer than 8 MiB" in result.error


def test_an_answer_longer_than_the_cap_is_not_read_whole(monkeypatch):
    monkeypatch.setattr(judge_client, "MAX_RESPONSE_BYTES", 1000)
    server = Canned(200, b'{"choices": "' + b"x" * 5000 + b'"}', "application/json")
    try:
        result = judge_client.judge(
            tiny_body(), server.endpoint, judge_client.RetryPolicy(max_retries=0)
        )
    finally:
        server.close()
    assert "longer than" in result.error


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# --- Issue 29: the Azure wire server, site-local, and names resolved by the form ----------

SPECIAL = [
    "168.63.129.16",  # Azure wire server: "global" to ipaddress
    "::ffff:168.63.129.16",
    "fec0::1",  # deprecated IPv6 site-local: "global" to ipaddress in 3.11
    "169.254.0.23",  # Tencent Cloud metadata (link-local)
    "192.0.0.192",  # Oracle Cloud metadata (IETF protocol assignments)
    "198.18.0.1",  # benchmarking
    "0.1.2.3",  # "this network"
]


@pytest.mark.parametrize("address", SPECIAL)
def test_metadata_and_special_addresses_are_refused(address):
    assert judge_client.address_refusal(address) is not None


def endpoint_data(url: str) -> dict:
    return {
        "name": "x",
        "base_url": url,
        "model": "m",
        "temperature": 0,
        "max_tokens": 5,
        "timeout_seconds": 5,
    }


@pytest.mark.parametrize("address", ["168.63.129.16", "[fec0::1]"])
def test_the_form_refuses_the_wire_server_and_site_local_literals(settings, address):
    settings.JUDGE_ALLOWED_NETWORKS = []
    form = JudgeEndpointForm(endpoint_data(f"http://{address}/v1"))
    assert not form.is_valid()
    assert "JUDGE_ALLOWED_NETWORKS" in str(form.errors["base_url"])


@pytest.mark.parametrize(
    "answers", [["168.63.129.16"], ["8.8.8.8", "169.254.169.254"], ["fec0::1"]]
)
def test_the_form_resolves_a_name_and_refuses_it_if_any_answer_is_internal(
    settings, monkeypatch, answers
):
    settings.JUDGE_ALLOWED_NETWORKS = []
    stub_resolver(monkeypatch, {"judge.example": answers})
    form = JudgeEndpointForm(endpoint_data("https://judge.example/v1"))
    assert not form.is_valid()
    assert "judge.example resolves to a" in str(form.errors["base_url"])


def test_the_form_takes_a_public_name_and_one_that_does_not_resolve_now(settings, monkeypatch):
    settings.JUDGE_ALLOWED_NETWORKS = []
    stub_resolver(monkeypatch, {"judge.example": ["8.8.8.8"]})
    assert JudgeEndpointForm(endpoint_data("https://judge.example/v1")).is_valid()

    def unknown(host, port, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    # Not resolvable today: accepted; each request resolves and checks it again.
    monkeypatch.setattr(judge_client, "getaddrinfo", unknown)
    assert JudgeEndpointForm(endpoint_data("https://later.example/v1")).is_valid()


def test_a_request_to_a_name_that_resolves_to_the_wire_server_opens_no_socket(monkeypatch):
    stub_resolver(monkeypatch, {"judge.example": ["168.63.129.16"]})
    no_connections(monkeypatch)
    with pytest.raises(judge_client.RefusedAddress, match="cloud metadata"):
        judge_client.guarded_socket("judge.example", 443, 1.0, ())
