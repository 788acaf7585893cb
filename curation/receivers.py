"""Receivers of annotate's signals. They run inside the sender's transaction."""

from .models import Verdict
from .services import update_verdict


def create_verdicts_for_imported_items(sender, *, project, item_ids, **kwargs) -> None:
    """Every item gets a Verdict (needs_votes) in the import's transaction."""
    Verdict.objects.bulk_create(
        [Verdict(item_id=item_id, project=project) for item_id in item_ids],
        batch_size=1000,
        ignore_conflicts=True,
    )


def update_verdict_on_vote(sender, *, item, locked=None, **kwargs) -> None:
    """Move the item's verdict through the contested rule, atomically with the vote."""
    update_verdict(item=item, locked=locked)
