"""The Python client's annotator side of issues 33 to 36 against a live
server: qualification and check gates, votes on items of more than two
responses (rankings with ties, best-of-N, per-response grades, an item's
criterion), and media parts with their poster, strip and waveform."""

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from rest_framework.authtoken.models import Token
from triplet_client import BadRequest, Client, Conflict, NotFound, PermissionDenied, StudioError

from annotate.models import Judgement, JudgementSlot, Task
from annotate.qualification.service import is_admitted
from tests.annotate.gates.test_checks_pages import paused_annotator
from tests.annotate.qualification.test_qualification import answer_all, qualifying_project
from tests.annotate.test_media_serving import DATA, stored_video
from tests.curation.verdicts.ranked_factories import ranked_item, ranked_project
from tests.factories import make_member, make_project

pytestmark = pytest.mark.django_db(transaction=True)


def client_for(live_server, user) -> Client:
    return Client(live_server.url, token=Token.objects.get_or_create(user=user)[0].key)


def test_qualification_and_checks_through_the_client(live_server):
    project, _, _ = qualifying_project(n=3)
    user = make_member(project)
    answer_all(project, user, [False, False, True])
    annotator = client_for(live_server, user)
    mine = annotator.qualification(project.slug)
    assert (mine.required, mine.admitted, mine.items, mine.pass_mark) == (True, False, 3, 0.8)
    assert [(a.right, a.total, a.passed) for a in mine.attempts] == [(1, 3, False)]
    assert mine.retry_at is not None and not mine.can_start  # the retry wait
    with pytest.raises(PermissionDenied):
        annotator.qualification_attempts(project.slug)

    curator_user = make_member(project, role="curator")
    curator = client_for(live_server, curator_user)
    table = curator.qualification_attempts(project.slug)
    assert (table.required, table.items) == (True, 3)
    (row,) = table.annotators
    assert (row.user_id, row.admitted_at, row.admitted_by) == (user.pk, None, None)
    assert [a.passed for a in row.attempts] == [False]
    admitted = curator.admit(project.slug, user.pk, reason="Senior radiologist")
    assert admitted.admitted_by == curator_user.username and admitted.admitted_at is not None
    assert is_admitted(project=project, user=user)
    assert annotator.qualification(project.slug).admitted_by_curator is True
    with pytest.raises(NotFound):
        curator.admit(project.slug, curator_user.pk)  # not an annotator

    # Checks: the annotator table and a reinstatement.
    project, paused = paused_annotator()
    curator = client_for(live_server, make_member(project, role="curator"))
    (row,) = curator.annotator_checks(project.slug)
    assert (row.user_id, row.paused, row.checks_total, row.check_accuracy) == (
        paused.pk,
        True,
        0,
        None,
    )
    assert row.pause is not None and (row.pause["total"], row.pause["threshold"]) == (3, 0.8)
    assert curator.reinstate(project.slug, paused.pk).paused is False
    with pytest.raises(Conflict) as again:
        curator.reinstate(project.slug, paused.pk)
    assert again.value.code == "not_paused"
    with pytest.raises(PermissionDenied):
        list(client_for(live_server, paused).annotator_checks(project.slug))


def canonical_ranks(assignment_id: int) -> dict[int, int]:
    judgement = Judgement.objects.get(assignment_id=assignment_id)
    return {s.slot: s.rank for s in JudgementSlot.objects.filter(judgement=judgement)}


def test_rankings_with_ties_best_of_n_and_per_response_grades(live_server):
    project = ranked_project(team=2, slug="rank")
    item = ranked_item(project)
    item.criterion = "Which answer is most accurate?"
    item.save(update_fields=["criterion"])
    admin = client_for(live_server, make_member(project, role="admin"))
    admin.update_domain("rank", "general_preference", asks_grade=True)
    first, second = (client_for(live_server, u) for u in project.team)

    a = first.claim_next("rank").assignment
    assert (a.task, a.criterion, a.response_names) == (
        "ranking",
        "Which answer is most accurate?",
        ["A", "B", "C", "D"],
    )
    assert a.left == a.right == "" and [p.kind for p in a.parts("C")] == ["text"]
    with pytest.raises(KeyError):
        a.parts("E")
    ranking, grades = [1, 2, 2, 4], ["A", "B", "B", "C"]
    judged = first.judge(a, ranking=ranking, grades=grades)
    assert (judged.ranking, judged.choice, judged.already_submitted) == (ranking, "", False)
    order = [int(s) for s in _display_order(a.id)]  # the canonical slot shown at each place
    assert canonical_ranks(a.id) == {slot: ranking[k] for k, slot in enumerate(order)}
    stored = Judgement.objects.get(assignment_id=a.id)
    slots = {s.slot: s.grade for s in JudgementSlot.objects.filter(judgement=stored)}
    assert slots == {slot: grades[k] for k, slot in enumerate(order)}
    assert first.judge(a, ranking=ranking, grades=grades).already_submitted

    # A ranking of the wrong length is a field error; nothing is stored.
    b = second.claim_next("rank").assignment
    with pytest.raises(BadRequest) as refused:
        second.judge(b, ranking=[1, 2], grades=grades)
    assert "ranking" in refused.value.fields
    assert not Judgement.objects.filter(assignment_id=b.id).exists()

    best = ranked_project(task=Task.BEST_OF_N, team=1, slug="best")
    ranked_item(best, n=3)
    picker = client_for(live_server, best.team[0])
    c = picker.claim_next("best").assignment
    assert c.task == "best_of_n" and c.response_names == ["A", "B", "C"]
    picked = picker.judge(c, pick="C")
    assert picked.pick == "C"
    chosen = Judgement.objects.get(assignment_id=c.id).choice
    assert chosen == _display_order(c.id)[2]  # the canonical slot shown third


def _display_order(assignment_id: int) -> str:
    from annotate.models import Assignment

    return Assignment.objects.get(pk=assignment_id).display_order


def test_media_parts_and_their_derivatives_download_blind(live_server, tmp_path):
    project = make_project(slug="media")
    asset = stored_video(project)
    studio = client_for(live_server, make_member(project))
    a = studio.claim_next("media").assignment
    (video,) = [p for place in ("left", "right") for p in a.parts(place) if p.kind == "video"]
    assert (video.content_type, video.duration_ms, video.poster_url) == ("video/mp4", 2000, None)
    assert asset.file not in str(a.content)
    assert studio.download_media(video) == DATA
    saved = studio.download_media(video, tmp_path / "clip.mp4")
    assert saved.read_bytes() == DATA
    with pytest.raises(StudioError, match="not made yet"):
        studio.download_media(video, derivative="poster")
    with pytest.raises(NotFound):  # asked by URL: the server says why
        studio.download_media(video.url, derivative="poster")

    asset.poster = f"posters/{asset.sha256[:2]}/{asset.sha256}.webp"
    asset.save(update_fields=["poster"])
    default_storage.save(asset.poster, ContentFile(b"RIFF0000WEBPVP8 poster"))
    a = studio.assignment(a)
    (video,) = [p for place in ("left", "right") for p in a.parts(place) if p.kind == "video"]
    assert video.poster_url == f"{video.url}poster/"
    assert studio.download_media(video, derivative="poster") == b"RIFF0000WEBPVP8 poster"

    stranger = client_for(live_server, make_member(make_project()))
    with pytest.raises(NotFound):
        stranger.download_media(video)
    with pytest.raises(StudioError, match="not on this server"):
        studio.download_media("https://elsewhere.example/api/v1/assignments/1/media/left/0/")


def test_check_and_qualification_items_made_through_the_client(live_server):
    from tests.curation.gold.test_gold_items import settled

    project = make_project(slug="gold")
    source = settled(project, side="2")
    curator = client_for(live_server, make_member(project, role="curator"))
    made = curator.make_gold_item(
        project.slug, source.pk, "qualification", reason="a clear case", explanation="*Why*"
    )
    assert (made.purpose, made.gold_choice, made.copied_from, made.retired_at) == (
        "qualification",
        "2",
        source.pk,
        None,
    )
    assert [g.item_id for g in curator.gold_items(project.slug)] == [made.item_id]
    with pytest.raises(Conflict):  # one live copy per source
        curator.make_gold_item(project.slug, source.pk, "check", reason="again")
    with pytest.raises(NotFound):
        curator.make_gold_item(project.slug, 999_999, "check", reason="no such item")
    with pytest.raises(BadRequest):
        curator.make_gold_item(project.slug, source.pk, "benchmark", reason="wrong purpose")
    edited = curator.edit_gold_item(project.slug, made.item_id, "Look at the axes.")
    assert edited.explanation == "Look at the axes."
    retired = curator.retire_gold_item(project.slug, made.item_id, reason="too easy")
    assert retired.retired_at is not None
    with pytest.raises(Conflict):
        curator.retire_gold_item(project.slug, made.item_id, reason="twice")
    annotator = client_for(live_server, make_member(project))
    with pytest.raises(PermissionDenied):
        list(annotator.gold_items(project.slug))
