from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    name = "annotate"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_delete, post_save

        from . import receivers
        from .models import Membership

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
