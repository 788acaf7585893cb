from django.apps import AppConfig
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import pre_save


def clear_expired_sessions(sender, request, user, **kwargs) -> None:
    """Every sign-in deletes the sessions that have run out (one DELETE by
    the expiry index), so the table stays the size of the live sessions
    without a cron job; `manage.py clearsessions` does the same on demand."""
    from config.sessions import SessionStore

    SessionStore.clear_expired()


def revoke_tokens_on_password_change(sender, instance, update_fields=None, **kwargs) -> None:
    """A new password ends every API token of the user, as it ends their
    other sessions: whoever learnt the old password may have made one. One
    query, and none for saves that leave the password alone (last_login)."""
    if instance.pk is None or (update_fields is not None and "password" not in update_fields):
        return
    stored = sender.objects.filter(pk=instance.pk).values_list("password", flat=True).first()
    if stored is not None and stored != instance.password:
        from rest_framework.authtoken.models import Token

        Token.objects.filter(user_id=instance.pk).delete()


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core import checks

        from config.checks import deploy_checks

        checks.register(deploy_checks, checks.Tags.security, deploy=True)
        pre_save.connect(
            revoke_tokens_on_password_change,
            sender=get_user_model(),
            dispatch_uid="revoke_tokens_on_password_change",
        )
        user_logged_in.connect(clear_expired_sessions, dispatch_uid="clear_expired_sessions")
