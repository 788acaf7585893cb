"""The Django admin's user pages under the account rule
(annotate.setup.accounts), registered by annotate.admin.

Django's own UserAdmin lets any staff member holding ``auth.change_user``
change any account, superusers included: set its password, change its email
(then reset the password by mail) or tick ``is_superuser``. Here a staff
member who is not a superuser changes only accounts that are neither staff
nor superusers (and their own, without its privileges), and nobody but a
superuser grants privileges. DRF's token admin is not registered at all:
an API token is made and revoked by its owner on /account/token/ (a site
admin ends someone's tokens with a set-password link or by deactivating
the account)."""

from __future__ import annotations

from django.contrib.auth.admin import UserAdmin

from annotate.setup.accounts import may_manage_account

PRIVILEGE_FIELDS = ("is_superuser", "is_staff", "groups", "user_permissions")


class AccountAdmin(UserAdmin):
    def _may_change(self, request, obj) -> bool:
        return obj is None or obj.pk == request.user.pk or may_manage_account(request.user, obj)

    def has_change_permission(self, request, obj=None):
        # Also guards the change-password page (UserAdmin.user_change_password).
        return super().has_change_permission(request, obj) and self._may_change(request, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and (
            obj is None or may_manage_account(request.user, obj)
        )

    def get_readonly_fields(self, request, obj=None):
        fields = tuple(super().get_readonly_fields(request, obj))
        if request.user.is_superuser or obj is None:
            return fields
        return (*fields, *PRIVILEGE_FIELDS)
