from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    name = "annotate"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.contrib.auth.signals import user_logged_in
        from django.core import checks
        from django.db.models.signals import post_delete, post_save, pre_save

        from config.checks import deploy_checks

        from . import receivers
        from .models import Membership

        checks.register(deploy_checks, checks.Tags.security, deploy=True)
        # Connected before curation's receivers (INSTALLED_APPS order), so
        # the leases have ended when curation rechecks the items.
        post_delete.connect(
            receivers.return_leases_of_departed_member,
            sender=Membership,
            dispatch_uid="annotate_membership_deleted",
        )
        post_save.connect(
            receivers.return_leases_of_deactivated_account,
            sender=get_user_model(),
            dispatch_uid="annotate_account_deactivated",
        )
        pre_save.connect(
            receivers.revoke_tokens_on_password_change,
            sender=get_user_model(),
            dispatch_uid="revoke_tokens_on_password_change",
        )
        user_logged_in.connect(
            receivers.clear_expired_sessions, dispatch_uid="clear_expired_sessions"
        )
