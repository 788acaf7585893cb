from django.contrib import admin

from .models import AuditEvent, Verdict


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = ["item", "project", "status", "final_choice", "provenance", "updated_at"]
    list_filter = ["project", "status", "provenance"]
    list_select_related = ["item", "project"]
    raw_id_fields = ["item"]
    # Verdicts change only through curation services, so every change is audited.
    readonly_fields = [f.name for f in Verdict._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """The audit trail is append-only: readable here, never editable."""

    list_display = ["created_at", "project", "item", "actor", "action"]
    list_filter = ["project", "action"]
    list_select_related = ["project", "item", "actor"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


# --- Item changes in the admin are audited ------------------------------------------
# annotate registers the Item admin; curation (which may import annotate) swaps
# in a subclass whose form asks for a reason and writes an AuditEvent.

from django import forms  # noqa: E402

from annotate.admin import ItemAdmin, ItemAdminForm  # noqa: E402
from annotate.models import Item  # noqa: E402

AUDITED_ITEM_FIELDS = [
    "domain", "external_id", "prompt", "image_path", "response_1", "response_2", "model_1",
    "model_2", "gold_choice", "reference_answer", "meta", "votes_needed",
]  # fmt: skip


class AuditedItemForm(ItemAdminForm):
    audit_reason = forms.CharField(
        label="Reason for this change",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Required. Recorded in the project's audit log with the before and after.",
    )

    class Meta:
        model = Item
        exclude: tuple[str, ...] = ()  # the admin's own field list decides


class AuditedItemAdmin(ItemAdmin):
    form = AuditedItemForm

    def has_delete_permission(self, request, obj=None):
        # Items carry votes and audit history; exclude them through curation instead.
        return False

    def save_model(self, request, obj, form, change):
        before = {}
        if change:
            old = Item.objects.get(pk=obj.pk)
            before = {f: _plain(getattr(old, f)) for f in AUDITED_ITEM_FIELDS}
        super().save_model(request, obj, form, change)
        after = {f: _plain(getattr(obj, f)) for f in AUDITED_ITEM_FIELDS}
        changed = [f for f in AUDITED_ITEM_FIELDS if before.get(f) != after[f]]
        if changed:
            AuditEvent.objects.create(
                project=obj.project,
                item=obj,
                actor=request.user,
                action="item_changed" if change else "item_created",
                before={f: before.get(f) for f in changed},
                after={f: after[f] for f in changed},
                reason=form.cleaned_data["audit_reason"],
            )

    def save_formset(self, request, form, formset, change):
        # Edited parts rewrite the text columns (ItemAdmin): audited as well.
        item = form.instance
        before = dict(Item.objects.filter(pk=item.pk).values(*PART_COLUMNS).first() or {})
        super().save_formset(request, form, formset, change)
        after = {f: getattr(item, f) for f in PART_COLUMNS}
        changed = [f for f in PART_COLUMNS if before.get(f) != after[f]]
        if change and changed:
            AuditEvent.objects.create(
                project=item.project,
                item=item,
                actor=request.user,
                action="item_changed",
                before={f: before.get(f) for f in changed},
                after={f: after[f] for f in changed},
                reason=form.cleaned_data["audit_reason"],
            )


PART_COLUMNS = ("prompt", "response_1", "response_2")


def _plain(value):
    if hasattr(value, "pk"):
        return value.pk
    return value


admin.site.unregister(Item)
admin.site.register(Item, AuditedItemAdmin)
