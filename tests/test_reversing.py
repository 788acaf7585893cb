"""config.reversing.reverse_one gives exactly what reverse() gives."""

import pytest
from django.urls import NoReverseMatch, reverse, set_script_prefix

from config.reversing import reverse_one


@pytest.mark.parametrize(
    ("name", "arg"),
    [
        ("work_item", 1),
        ("work_item", 987654321),
        ("work_submit", 42),
        ("work_skip", "7"),
        ("history", "my-project_2"),
        ("history", "987654321"),
        ("history", "émoji é"),  # quoted by reverse() itself
        ("history", "a/b"),
        # The media view's <path:path>: images and thumbnails.
        ("media", "images/ab/abcdef0123.jpg"),
        ("media", "thumbs/ab/abcdef0123_thumb.webp"),
        ("media", "x"),
        ("media", ".hidden/x"),
        ("media", "a/./b"),
        ("media", "../etc/passwd"),
        ("media", "a//b"),
        ("media", "dir/"),
        ("media", "/absolute/x.png"),
        ("media", "//evil.example/x.png"),
        ("media", "a b/c?d#e%20"),
        ("media", "é/x.png"),
        ("media", ""),
        ("history", "a.b"),
        ("work_item", "1/2"),
    ],
)
def test_reverse_one_equals_reverse(name, arg):
    try:
        expected = reverse(name, args=[arg])
    except NoReverseMatch:
        with pytest.raises(NoReverseMatch):
            reverse_one(name, arg)
    else:
        assert reverse_one(name, arg) == expected
        assert reverse_one(name, arg) == expected  # from the cached template


def test_plain_arguments_and_media_paths_take_the_fast_path(monkeypatch):
    """After the first call per pattern, no reverse() at all for the URLs a
    judgement builds, the image's included."""
    cases = [("work_item", 3), ("history", "p-1"), ("media", "images/ab/abc.jpg")]
    expected = [reverse(name, args=[arg]) for name, arg in cases]
    for name, arg in cases:
        reverse_one(name, arg)  # the templates are cached

    def no_reverse(*args, **kwargs):
        raise AssertionError("reverse() was called")

    monkeypatch.setattr("config.reversing.reverse", no_reverse)
    assert [reverse_one(name, arg) for name, arg in cases] == expected


def test_an_argument_the_pattern_refuses_still_raises():
    with pytest.raises(NoReverseMatch):
        reverse("work_item", args=["abc"])
    with pytest.raises(NoReverseMatch):
        reverse_one("work_item", "abc")


def test_the_script_prefix_is_part_of_the_url():
    plain = reverse_one("work_item", 5)
    set_script_prefix("/studio/")
    try:
        assert reverse_one("work_item", 5) == reverse("work_item", args=[5]) == "/studio" + plain
    finally:
        set_script_prefix("/")
    assert reverse_one("work_item", 5) == plain


def test_a_pattern_that_refuses_the_marker_falls_back_to_reverse():
    """work_done takes a slug: fine. A name with no one-argument pattern, or
    one whose converter refuses the marker, is reverse()'s to answer."""
    assert reverse_one("work_done", "p") == reverse("work_done", args=["p"])
    with pytest.raises(NoReverseMatch):
        reverse_one("healthz", 1)
