from django.apps import AppConfig


class CurationConfig(AppConfig):
    name = "curation"
    verbose_name = "Curation"

    def ready(self) -> None:
        from annotate import signals as annotate_signals
        from annotate.services import lock_with_each_vote

        from . import receivers, setup_receivers
        from .services import VERDICT_VOTE_LOCK

        annotate_signals.items_imported.connect(
            receivers.create_verdicts_for_imported_items, dispatch_uid="curation_items_imported"
        )
        annotate_signals.judgement_recorded.connect(
            receivers.update_verdict_on_vote, dispatch_uid="curation_judgement_recorded"
        )
        annotate_signals.domain_export_locked.connect(
            setup_receivers.releases_using_domain, dispatch_uid="curation_domain_export_locked"
        )
        # The receiver's verdict lock, taken by the vote's own statement.
        lock_with_each_vote(VERDICT_VOTE_LOCK)
