from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in


def clear_expired_sessions(sender, request, user, **kwargs) -> None:
    """Every sign-in deletes the sessions that have run out (one DELETE by
    the expiry index), so the table stays the size of the live sessions
    without a cron job; `manage.py clearsessions` does the same on demand."""
    from config.sessions import SessionStore

    SessionStore.clear_expired()


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core import checks

        from config.checks import deploy_checks

        checks.register(deploy_checks, checks.Tags.security, deploy=True)
        user_logged_in.connect(clear_expired_sessions, dispatch_uid="clear_expired_sessions")
