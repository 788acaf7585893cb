"""Receivers of Django's model signals for annotate's own rows."""

from annotate.loop.service import return_leases

from .models import Membership


def return_leases_of_departed_member(sender, *, instance, **kwargs) -> None:
    """A membership was deleted: the member's open leases in the project end."""
    return_leases(project_id=instance.project_id, user_id=instance.user_id)


def return_leases_of_deactivated_account(sender, *, instance, update_fields=None, **kwargs):
    """An account was deactivated: its open leases end in every project."""
    if instance.is_active or (update_fields is not None and "is_active" not in update_fields):
        return
    for project_id in Membership.objects.filter(user=instance).values_list("project_id", flat=True):
        return_leases(project_id=project_id, user_id=instance.pk)
