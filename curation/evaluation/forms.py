"""Forms of the evaluation pages: uploaded predictions, judge endpoints, judge runs."""

import urllib.parse
from typing import cast

from django import forms
from django.conf import settings
from django.core.validators import MaxValueValidator

from curation.benchmarks import registry
from curation.evaluation import judge_client
from curation.evaluation.judge_calls import sends
from curation.evaluation.media_content import DEFAULT_FRAMES, MAX_FRAMES, MIN_FRAMES
from curation.models import VideoAs


class EvaluationForm(forms.Form):
    name = forms.CharField(max_length=120, help_text="The model or judge evaluated.")
    predictions = forms.FileField()
    format = forms.ChoiceField(
        required=False,
        initial="auto",
        label="Predictions format",
        help_text="Each benchmark's predictions are scored against its own files in the "
        "release, as its official scorer does.",
    )
    swapped = forms.FileField(
        required=False,
        help_text="Optional: the same model with Output1/Output2 swapped, for position "
        "consistency.",
    )
    official_compat = forms.BooleanField(
        required=False,
        label="Score unknown IDs by their own Label (official script)",
        help_text="Lines whose ID is not in this release are normally listed as unknown and "
        "not scored; with this, a line that carries Label is scored against it, in its "
        "Meta.Category, as the official Multimodal RewardBench script does.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        benchmarks = registry.all_benchmarks()
        fmt = cast(forms.ChoiceField, self.fields["format"])
        fmt.choices = [("auto", "From the file's shape")] + [
            (b.key, b.upload_label) for b in benchmarks
        ]
        self.fields["predictions"].help_text = " ".join(b.upload_help for b in benchmarks)

    def clean_format(self):
        return self.cleaned_data["format"] or "auto"


class JudgeEndpointForm(forms.Form):
    """An admin's judge endpoint settings. The API key field is write-only:
    it is never filled in when the form is shown again."""

    name = forms.CharField(max_length=80, help_text="How curators pick it, e.g. gpt-4o.")
    base_url = forms.URLField(
        max_length=500,
        assume_scheme="https",
        label="Base URL",
        help_text="Up to /v1, e.g. https://api.openai.com/v1, or http://10.0.0.5:8000/v1 for a "
        "vLLM server whose network the JUDGE_ALLOWED_NETWORKS setting lists; requests go to "
        "the base URL + /chat/completions.",
    )
    model = forms.CharField(max_length=200, help_text="Sent as the request's model field.")
    api_key = forms.CharField(
        required=False,
        max_length=1000,
        label="API key",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Leave blank to keep the stored key; changing the base URL's scheme, host or "
        "port removes it (a key is only sent where it was entered for). Stored encrypted; "
        "never shown again.",
    )
    clear_api_key = forms.BooleanField(required=False, label="Remove the stored API key")
    temperature = forms.FloatField(
        required=False,
        min_value=0,
        max_value=2,
        help_text="Leave blank to send none (the server's default), as the benchmark's judge "
        "script does; 0 for the most deterministic answers.",
    )
    max_tokens = forms.IntegerField(
        min_value=1, max_value=131072, initial=1024, help_text="The benchmark's script uses 1024."
    )
    timeout_seconds = forms.FloatField(
        min_value=1, max_value=3600, initial=120, label="Timeout (seconds, per request)"
    )

    def __init__(self, *args, has_key: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        # Nothing to remove before a key exists (a new endpoint, or none stored).
        if not has_key:
            del self.fields["clear_api_key"]
            self.fields["api_key"].help_text = (
                "Only if the server needs one. Sent only to this base URL; stored encrypted, "
                "never shown again."
            )

    def clean_base_url(self):
        url = self.cleaned_data["base_url"].strip()
        if not url.lower().startswith(("http://", "https://")):
            raise forms.ValidationError("Use an http:// or https:// URL.")
        if "?" in url or "#" in url:
            raise forms.ValidationError("Give the base URL without a query or fragment.")
        refusal = _address_refusal(url)
        if refusal:
            raise forms.ValidationError(
                f"{refusal}: judge requests go only to public addresses unless the server's "
                "JUDGE_ALLOWED_NETWORKS setting lists the network (e.g. 10.0.0.0/8 for a "
                "vLLM server on the LAN)."
            )
        return url.rstrip("/")

    def clean(self):
        data = super().clean()
        if data.get("api_key") and data.get("clear_api_key"):
            raise forms.ValidationError(
                "Either enter a new key or remove the stored one, not both."
            )
        return data


def _address_refusal(url: str) -> str:
    """Early feedback for a base URL whose host is, or resolves to, an
    address judge requests may not reach (the guard each request runs again
    when it connects: curation.evaluation.judge_client.guarded_socket). A
    name that does not resolve now is accepted: its requests will fail, or
    be refused, when they resolve it."""
    parts = urllib.parse.urlsplit(url)
    host = (parts.hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        host = "127.0.0.1"
    allowed = judge_client.parse_networks(settings.JUDGE_ALLOWED_NETWORKS)
    try:
        kind = judge_client.address_refusal(host, allowed)
    except ValueError:  # a name: resolve it, as each request will
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            judge_client.resolve_checked(host, port, allowed)
        except judge_client.RefusedAddress as exc:
            return f"{host} resolves to a {exc.kind} address"
        except (OSError, ValueError):
            return ""
        return ""
    return f"{host} is a {kind} address" if kind else ""


class JudgeRunForm(forms.Form):
    endpoint: forms.ModelChoiceField = forms.ModelChoiceField(
        queryset=None, empty_label=None, label="Judge endpoint"
    )
    name = forms.CharField(max_length=120, help_text="Its name on the leaderboard.")
    swapped = forms.BooleanField(
        required=False,
        label="Second pass with Output1/Output2 swapped",
        help_text="Doubles the requests; gives the position-consistency extra.",
    )
    scoring = forms.ChoiceField(
        required=False,
        label="Benchmark rules",
        help_text="Which benchmark's items are sent, with its judge prompt, and whose "
        "scorer reads the answers.",
    )
    concurrency = forms.IntegerField(
        min_value=1, initial=4, help_text="Requests in flight at once."
    )
    video_as = forms.ChoiceField(
        required=False,
        choices=VideoAs.choices,
        initial=VideoAs.FRAMES,
        label="Send videos as",
        help_text="Frames: JPEG images at moments drawn from the run's seed. The video file: "
        "only for endpoints that accept a video part. Audio always goes as input audio.",
    )
    video_frames = forms.IntegerField(
        required=False,
        min_value=MIN_FRAMES,
        max_value=MAX_FRAMES,
        initial=DEFAULT_FRAMES,
        label="Frames per video",
        help_text=f"{MIN_FRAMES} to {MAX_FRAMES}, spread evenly over each clip.",
    )

    def clean_scoring(self):
        return self.cleaned_data["scoring"] or None

    # Left out (an older page, a script): the defaults.
    def clean_video_as(self):
        return self.cleaned_data["video_as"] or VideoAs.FRAMES

    def clean_video_frames(self):
        frames = self.cleaned_data["video_frames"]
        return DEFAULT_FRAMES if frames is None else frames

    def __init__(self, *args, project, max_concurrency: int, release=None, **kwargs):
        super().__init__(*args, **kwargs)
        benchmarks = registry.all_benchmarks()
        # A benchmark that decides its own calls ignores the option: say what it sends.
        own = [f"{b.judge_label}: {sends(b, False)}" for b in registry.offering("judge_calls")]
        if own:
            swapped = cast(forms.BooleanField, self.fields["swapped"])
            swapped.help_text += (
                " Ignored by rules that decide their own calls — " + "; ".join(own) + "."
            )
        default = registry.default_for(release) if release is not None else None
        # What the release's own rules send, when they decide it (shown by the form).
        self.calls_note = (
            f"With {default.judge_label}: {sends(default, False)} (the swapped option is ignored)."
            if default is not None and hasattr(default, "judge_calls")
            else ""
        )
        scoring = cast(forms.ChoiceField, self.fields["scoring"])
        scoring.choices = [("", "As the release suggests (its most specific benchmark)")] + [
            (b.key, b.judge_label) for b in benchmarks
        ]
        endpoint = cast(forms.ModelChoiceField, self.fields["endpoint"])
        endpoint.queryset = project.judge_endpoints.order_by("name")
        concurrency = cast(forms.IntegerField, self.fields["concurrency"])
        concurrency.max_value = max_concurrency
        concurrency.validators.append(MaxValueValidator(max_concurrency))
        concurrency.widget.attrs["max"] = max_concurrency
