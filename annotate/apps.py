from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    name = "annotate"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from config.database import connect_signals

        connect_signals()  # PostgreSQL reads timestamps in C (config/database.py)
