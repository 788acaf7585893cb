"""Receivers of Django's signals: annotate's own rows, and the site's
accounts (their API tokens and sessions)."""

from importlib import import_module

from django.conf import settings
from rest_framework.authtoken.models import Token

from annotate.loop.leases import return_leases

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


def revoke_tokens_on_password_change(sender, instance, update_fields=None, **kwargs) -> None:
    """A new password ends every API token of the user, as it ends their
    other sessions: whoever learnt the old password may have made one. One
    query, and none for saves that leave the password alone (last_login)."""
    if instance.pk is None or (update_fields is not None and "password" not in update_fields):
        return
    stored = sender.objects.filter(pk=instance.pk).values_list("password", flat=True).first()
    if stored is not None and stored != instance.password:
        Token.objects.filter(user_id=instance.pk).delete()


def clear_expired_sessions(sender, request, user, **kwargs) -> None:
    """Every sign-in deletes the sessions that have run out (one DELETE by
    the expiry index), so the session table stays the size of the live
    sessions without a cron job; `manage.py clearsessions` does the same."""
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()
