from django.apps import AppConfig


class CurationConfig(AppConfig):
    name = "curation"
    verbose_name = "Curation"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_delete, post_save

        from annotate import signals as annotate_signals
        from annotate.models import Membership
        from curation.releases import receivers as setup_receivers
        from curation.verdicts import receivers

        annotate_signals.items_imported.connect(
            receivers.create_verdicts_for_imported_items, dispatch_uid="curation_items_imported"
        )
        annotate_signals.release_imported.connect(
            receivers.decide_items_imported_from_a_release,
            dispatch_uid="curation_release_imported",
        )
        annotate_signals.imported_votes_cast.connect(
            receivers.decide_items_with_imported_votes, dispatch_uid="curation_imported_votes"
        )
        annotate_signals.import_recorded.connect(
            receivers.audit_import, dispatch_uid="curation_import_recorded"
        )
        annotate_signals.judgement_recorded.connect(
            receivers.update_verdict_on_vote, dispatch_uid="curation_judgement_recorded"
        )
        annotate_signals.eligibility_changed.connect(
            receivers.recheck_on_eligibility_change, dispatch_uid="curation_eligibility_changed"
        )
        for signal in (post_save, post_delete):
            signal.connect(
                receivers.recheck_on_membership_change,
                sender=Membership,
                dispatch_uid=f"curation_membership_{signal is post_save}",
            )
        post_save.connect(
            receivers.recheck_on_account_change,
            sender=get_user_model(),
            dispatch_uid="curation_account_changed",
        )
        annotate_signals.annotator_paused.connect(
            receivers.audit_pause, dispatch_uid="curation_annotator_paused"
        )
        annotate_signals.annotator_reinstated.connect(
            receivers.audit_reinstatement, dispatch_uid="curation_annotator_reinstated"
        )
        annotate_signals.domain_export_locked.connect(
            setup_receivers.releases_using_domain, dispatch_uid="curation_domain_export_locked"
        )
