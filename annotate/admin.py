from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import TokenProxy

from .models import (
    Assignment,
    Domain,
    ImageAsset,
    Item,
    Judgement,
    JudgementSlot,
    Membership,
    Project,
)
from .models.parts import ItemPart, derive_item_text
from .setup.user_admin import AccountAdmin


class DomainInline(admin.TabularInline):
    model = Domain
    extra = 0


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "votes_per_item", "allow_tie", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [DomainInline, MembershipInline]

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
        if not change:
            obj.create_default_domains()


@admin.register(Domain)
class DomainAdmin(admin.ModelAdmin):
    list_display = ["slug", "project", "export_category", "kind"]
    list_filter = ["project", "kind"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "project", "role", "pseudonym"]
    list_filter = ["project", "role"]
    autocomplete_fields = ["user"]


@admin.register(ImageAsset)
class ImageAssetAdmin(admin.ModelAdmin):
    list_display = ["sha256", "format", "width", "height", "size_bytes", "created_at"]
    search_fields = ["sha256"]


class ItemAdminForm(forms.ModelForm):
    """An item's own fields; its content is its parts, edited in the inline
    below (issue 32): the text columns and the image are derived from them
    and shown read-only."""

    class Meta:
        model = Item
        fields = ["project", "domain", "external_id", "model_1", "model_2", "gold_choice"]


class ItemPartForm(forms.ModelForm):
    class Meta:
        model = ItemPart
        fields = ["slot", "position", "kind", "text", "image", "source_path"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["text"].strip = False  # white space is content (published datasets keep it)


class ItemPartInline(admin.TabularInline):
    model = ItemPart
    form = ItemPartForm
    fk_name = "item"
    extra = 0
    fields = ["slot", "position", "kind", "text", "image", "source_path"]
    raw_id_fields = ["image"]
    ordering = ["slot", "position"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    """An item's content is edited part by part (the inline, each part
    checked by its kind's validator, text parts rendered by the sanitised
    renderer); its derived columns follow (derive_item_text)."""

    form = ItemAdminForm
    inlines = [ItemPartInline]
    list_display = ["external_id", "project", "domain", "votes_needed", "live_assignments"]
    list_filter = ["project", "domain"]
    search_fields = ["external_id", "prompt"]
    list_select_related = ["project", "domain"]
    readonly_fields = [
        "prompt",
        "response_1",
        "response_2",
        "image",
        "image_path",
        "content_hash",
        "live_assignments",
        "votes_1",
        "votes_2",
        "votes_tie",
        "votes_ranked",
    ]

    def save_formset(self, request, form, formset, change):
        parts = formset.save(commit=False)
        for part in formset.deleted_objects:
            part.delete()
        for part in parts:
            part.render_html()  # text parts: the sanitised HTML; images: none
            part.save()
        derive_item_text(form.instance)


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["item", "annotator", "status", "display_order", "claimed_at"]
    list_filter = ["status"]
    list_select_related = ["item", "annotator"]
    raw_id_fields = ["item"]


class JudgementSlotInline(admin.TabularInline):
    """A judgement's per-slot answers (issue 32), read-only as the judgement."""

    model = JudgementSlot
    fields = ["slot", "correctness", "grade", "rank"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Judgement)
class JudgementAdmin(admin.ModelAdmin):
    """Judgements are append-only: viewable, never editable or deletable."""

    list_display = ["assignment", "revision", "is_current", "task", "choice", "created_at"]
    list_filter = ["task", "choice", "is_current"]
    list_select_related = ["assignment"]
    inlines = [JudgementSlotInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


# Accounts: Django's user admin under the account rule, and no token admin
# (annotate.setup.user_admin says why). django.contrib.auth and
# rest_framework.authtoken come before annotate in INSTALLED_APPS, so their
# registrations exist here.
admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), AccountAdmin)
admin.site.unregister(TokenProxy)
