from demo.build import (
    DEMO_SEED,
    DOMAIN_GUIDELINES,
    ITEMS_PER_DOMAIN,
    PROJECT_DESCRIPTION,
    PROJECT_GUIDELINES,
    PROJECT_NAME,
    DemoItem,
    build_demo_items,
    write_mrb_dataset,
)

__all__ = [
    "DEMO_SEED",
    "DOMAIN_GUIDELINES",
    "ITEMS_PER_DOMAIN",
    "PROJECT_DESCRIPTION",
    "PROJECT_GUIDELINES",
    "PROJECT_NAME",
    "DemoItem",
    "build_demo_items",
    "write_mrb_dataset",
]
