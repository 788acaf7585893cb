"""Setting a benchmark up without Django admin: projects, domains, members,
invitations and site-wide user creation (views, forms, one service)."""
