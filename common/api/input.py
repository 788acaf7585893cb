"""A request body read through its view's input serializer (HackSoft's
`InputSerializer`, one per endpoint)."""

from __future__ import annotations

from typing import Any


def validated(view, request, *, partial: bool = False) -> dict[str, Any]:
    """The body of `request` checked by `view.InputSerializer`: its validated
    data, else a 400 naming each bad field. `partial`: a PATCH, where every
    field may be left out."""
    serializer = view.InputSerializer(data=request.data, partial=partial)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
