"""Schema generation tweaks (drf-spectacular)."""

from drf_spectacular import openapi


def component_name(serializer_class: type) -> str:
    """`ProjectListApi.OutputSerializer` → `ProjectListOutput`: every endpoint
    nests its own InputSerializer/OutputSerializer (HackSoft style), so the
    bare class names would collide in the schema's components."""
    qualname = serializer_class.__qualname__.replace("Serializer", "")
    return "".join(p.removesuffix("Api") for p in qualname.split("."))


class AutoSchema(openapi.AutoSchema):
    def get_serializer_name(self, serializer, direction):
        if "." in type(serializer).__qualname__:
            return component_name(type(serializer))
        return super().get_serializer_name(serializer, direction)


# Choice sets shared by several fields, named once in the schema
# (SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"] names them).
DISPLAYED_CHOICES = ["left", "right", "tie"]
CANONICAL_CHOICES = ["1", "2", "tie"]
RESPONSES = ["1", "2"]
OPTIONAL_RESPONSES = ["", "1", "2"]
CORRECTNESS_CHOICES = [("yes", "Correct"), ("no", "Incorrect"), ("unsure", "Unsure")]
# Graded preference (annotate.loop.scales, annotate.loop.rules.GRADES; a test
# holds them equal).
PREFERENCE_SCALES = ["ab", "graded6", "graded7"]
GRADES = ["A", "B", "C"]
# A domain's kind (annotate.models.DomainKind). Named "KindEnum" in the schema,
# as it was before content parts brought a second "kind" (PartKindEnum).
DOMAIN_KINDS = ["correctness", "preference"]
