"""The only channel from annotate to curation (which imports annotate, never
the other way round). Senders fire these inside the transaction that made the
change, so receivers update derived state atomically with it."""

from django.dispatch import Signal

# Sent by annotate.loop.service inside the vote's transaction, after the
# vote's own rows (assignment, item, membership) are written and locked: a
# receiver locks the rows it keeps itself, after those (curation its Verdict).
# kwargs: judgement (Judgement), item (Item, its tallies with the vote
# counted), revision (bool)
judgement_recorded = Signal()

# Sent by the import service inside the import transaction.
# kwargs: project (Project), item_ids (list[int]), updated_ids (list[int])
items_imported = Signal()

# Sent by annotate.importing.formats.release inside the import transaction,
# after items_imported, for the items a studio release created: each item's
# gold_choice holds the release's label. A receiver records the decision
# (curation: the verdict, with the release in its audit trail).
# kwargs: project (Project), item_ids (list[int]), release (dict: project,
# version, seed, sha256 of the zip, all_data_sha256)
release_imported = Signal()

# Sent by annotate.importing.imported_votes inside the import transaction,
# after published annotations were cast as votes of imported annotators on
# these (new) items, their tallies updated. A receiver applies its rules to
# them (curation: the contested rule, in one batch).
# kwargs: project (Project), item_ids (list[int])
imported_votes_cast = Signal()

# Sent inside the transaction when annotators stopped being eligible for some
# items without voting (annotate.eligibility): leases ran out
# (expire_stale_leases) or an item was skipped (skip_item). Membership and
# account changes are seen through Membership's and User's own model signals
# (post_save/post_delete: they also catch Django admin's edits).
# kwargs: project_id (int), item_ids (list[int])
eligibility_changed = Signal()
# Sent by annotate.setup.service before a domain's export Category string or
# slug changes. A receiver returns a reason (str) if a release uses the
# domain, which refuses the change; None otherwise.
# kwargs: domain (Domain)
domain_export_locked = Signal()

# Sent by annotate.importing.history inside the transaction that records a
# finished import in the setup history, so a receiver can put the same record
# in its own log (curation: the audit log).
# kwargs: project (Project), actor (User), details (dict: via, files and their
# SHA-256, options, counts), summary (str)
import_recorded = Signal()

# Sent by annotate.checks inside the transaction that paused an annotator
# (their check accuracy fell below the project's threshold) or reinstated
# them, so a receiver can keep its own record (curation: the audit log).
# kwargs: pause (ProjectPause); annotator_reinstated also actor (User)
annotator_paused = Signal()
annotator_reinstated = Signal()
