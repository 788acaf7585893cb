"""The pure rules of a training mix: normalisation, filters, caps, weights,
deduplication and its report, the TRL row (no database)."""

from __future__ import annotations

from curation.releases.mixes.rows import (
    Candidate,
    Filters,
    SourceSpec,
    normalise_prompt,
    select,
    trl_row,
    weighted_limits,
)

ALL = Filters(
    statuses=frozenset({"agreed", "resolved"}),
    provenances=frozenset({"unanimous", "majority", "adjudicated", "gold", "reviewed"}),
)


def cand(
    ext_id,
    *,
    prompt=None,
    sha=None,
    domain="vqa",
    status="agreed",
    provenance="unanimous",
    share=1.0,
    chosen="1",
) -> Candidate:
    return Candidate(
        external_id=ext_id,
        domain=domain,
        category=domain,
        prompt=prompt or f"Prompt {ext_id}",
        response_1="one",
        response_2="two",
        chosen=chosen,
        image_sha256=sha or ext_id.ljust(64, "0")[:64],
        image_ext="png",
        status=status,
        provenance=provenance,
        share=share,
    )


def test_normalised_prompt_is_nfkc_casefolded_with_white_space_collapsed():
    assert normalise_prompt("  What   is\tshown?\n") == "what is shown?"
    assert normalise_prompt("\uff37\uff28\uff21\uff34 \ufb01le STRASSE") == normalise_prompt(
        "what file straße"
    )
    assert normalise_prompt("What is shown") != normalise_prompt("What is shown?")


def test_filters_leave_out_by_status_provenance_share_and_domain_with_reasons():
    rows = [
        cand("a"),
        cand("b", status="resolved", provenance="adjudicated"),
        cand("c", provenance="majority", share=0.6),
        cand("d", share=None),
        cand("e", domain="safety"),
    ]
    filters = Filters(
        statuses=frozenset({"agreed"}),
        provenances=frozenset({"unanimous", "majority"}),
        min_share=0.7,
        domains=frozenset({"vqa"}),
    )
    out = select([SourceSpec("s")], [rows], filters=filters, seed=1)
    assert [c.external_id for _, c in out.kept] == ["a"]
    reasons = {d["id"]: d["reason"] for d in out.dropped}
    assert reasons == {"b": "status", "c": "min_share", "d": "min_share", "e": "domain"}
    assert out.report[0]["filtered"] == {"status": 1, "min_share": 2, "domain": 1}


def test_duplicates_across_sources_are_dropped_and_reported_with_what_they_duplicate():
    shared = "f" * 64
    first = [cand("x1", prompt="What is SHOWN?", sha=shared), cand("x2")]
    second = [cand("y1", prompt="what is  shown?", sha=shared), cand("y2", sha=shared)]
    out = select([SourceSpec("A"), SourceSpec("B")], [first, second], filters=ALL, seed=3)
    assert sorted(c.external_id for _, c in out.kept) == ["x1", "x2", "y2"]
    assert out.dropped == [
        {"source": "B", "id": "y1", "reason": "duplicate", "duplicate_of": "A:x1"}
    ]
    assert out.report[1]["duplicates"] == 1 and out.report[1]["duplicate_of"] == {"A": 1}
    # Same image, other prompt (y2) and same prompt, other image are not duplicates.
    no_dedup = select(
        [SourceSpec("A"), SourceSpec("B")], [first, second], filters=ALL, seed=3, dedup=False
    )
    assert len(no_dedup.kept) == 4


def test_caps_are_seeded_and_deterministic():
    rows = [cand(f"i{n:03}") for n in range(50)]
    a = select([SourceSpec("s", cap=10)], [rows], filters=ALL, seed=7)
    b = select([SourceSpec("s", cap=10)], [list(reversed(rows))], filters=ALL, seed=7)
    c = select([SourceSpec("s", cap=10)], [rows], filters=ALL, seed=8)
    ids = [x.external_id for _, x in a.kept]
    assert len(ids) == 10 and ids == [x.external_id for _, x in b.kept]
    assert ids != [x.external_id for _, x in c.kept]
    assert a.report[0]["over_limit"] == 40
    assert sum(d["reason"] == "over_limit" for d in a.dropped) == 40


def test_a_pair_left_out_for_a_cap_may_come_from_a_later_source():
    shared = "e" * 64
    first = [cand("a1", sha=shared, prompt="same"), cand("a2"), cand("a3")]
    second = [cand("b1", sha=shared, prompt="same")]
    out = select([SourceSpec("A", cap=1), SourceSpec("B")], [first, second], filters=ALL, seed=0)
    kept = {c.external_id for _, c in out.kept}
    assert "b1" in kept or "a1" in kept
    assert len([k for k in kept if k in ("a1", "b1")]) == 1


def test_weights_split_the_mix_in_proportion():
    assert weighted_limits([100, 100, 100], [1, 2, 1], 40) == [10, 20, 10]
    # No size: the largest mix the weights allow (source 2 has 30 for its half).
    assert weighted_limits([100, 30, 100], [1, 2, 1], None) == [15, 30, 15]
    assert weighted_limits([3, 3], [1, 1], 10) == [3, 3]  # never more than there is
    rows = [[cand(f"{s}{n}") for n in range(20)] for s in "ab"]
    out = select(
        [SourceSpec("A", weight=3), SourceSpec("B", weight=1)],
        rows,
        filters=ALL,
        seed=1,
        weights_mode=True,
        size=8,
    )
    assert [r["kept"] for r in out.report] == [6, 2]


def test_trl_row_is_conversational_with_the_chosen_side():
    row = trl_row(row_id="s:1", source="s", candidate=cand("1", chosen="2"), images=["../i.png"])
    assert row == {
        "id": "s:1",
        "prompt": [{"role": "user", "content": "Prompt 1"}],
        "chosen": [{"role": "assistant", "content": "two"}],
        "rejected": [{"role": "assistant", "content": "one"}],
        "images": ["../i.png"],
        "category": "vqa",
        "source": "s",
    }
