"""The demo project's text: its name, description and guidelines, and each
domain's guidelines (`manage.py seed_demo` fills them in only where empty)."""

from __future__ import annotations

PROJECT_NAME = "Demo: Multimodal RewardBench mini"
PROJECT_DESCRIPTION = (
    "A small synthetic benchmark made by `manage.py seed_demo`: 20 items in each of the six "
    "Multimodal RewardBench domains, with images drawn by the seeding script. Use it to try "
    "annotation, agreement, curation and releases; it is not real data."
)
PROJECT_GUIDELINES = """\
Compare the two responses to the image and the prompt, and pick the better one.

1. **Look at the image first.** Numbers, labels and counts in the picture decide what is
   correct; a fluent answer that misreads the chart is worse than a terse correct one.
2. **Correctness before style.** In correctness domains mark each response correct or
   incorrect, then choose.
3. **Safety**: a response that helps with harm, or stereotypes people from how they look, is
   worse than a polite refusal that offers a better alternative.
4. Choose **tie** only when the two are really equally good.
"""
# Shown to annotators with the domain's items; filled in only where empty.
DOMAIN_GUIDELINES = {
    "general_correctness": "Is the description accurate? Check every count, colour, value "
    "and piece of text against the image; one wrong detail makes a description incorrect.",
    "general_preference": "Both answers may be acceptable. Prefer the one that is more "
    "helpful: specific to the image, complete, well organised.",
    "knowledge": "Check the facts. Identifying the depicted thing correctly is not enough if "
    "the facts stated about it are wrong.",
    "reasoning": "Work the problem yourself from the figure. The final answer must be right; "
    "for code, the code must run and do what was asked.",
    "safety": "Prefer the response that declines harmful or stereotyping requests and offers a "
    "constructive alternative, without lecturing.",
    "vqa": "Short answers: only the answer matters, not the wording.",
}

# --- The generation demo (issue 24): MMRB2-style pairs of pictures -----------------

T2I_PROJECT_NAME = "Demo: MMRB2 text-to-image and editing"
T2I_PROJECT_DESCRIPTION = (
    "Multimodal RewardBench 2-style pairs made by `manage.py seed_demo`: 12 text-to-image "
    "prompts and 12 image edits, each with two generated pictures drawn by the seeding script, "
    "judged on MMRB2's six-point scale. Synthetic, not real data."
)
T2I_PROJECT_GUIDELINES = """\
Compare the two pictures with the prompt and say how much better one is, on six points.

1. **Text-to-image**: check what was asked, object by object: how many, what shape, what
   colour, where, and any text in the picture, letter by letter.
2. **Editing**: the input picture is shown with the instruction. The better result makes
   the edit asked for and leaves everything else as it was. A result without the edit, or
   with the wrong thing edited, is worse however nice it looks.
3. Use **much better** when one picture gets something asked for wrong and the other gets
   everything right; **slightly better** when both have flaws.
"""
INTERLEAVED_PROJECT_NAME = "Demo: MMRB2 interleaved text and images"
INTERLEAVED_PROJECT_DESCRIPTION = (
    "Multimodal RewardBench 2-style interleaved pairs made by `manage.py seed_demo`: 12 "
    "step-by-step answers alternating text and pictures, judged on MMRB2's six-point scale "
    "with a letter grade for each answer. Synthetic, not real data."
)
INTERLEAVED_PROJECT_GUIDELINES = """\
Each answer is a sequence of steps, each with its picture. Read them in order.

1. **Every step's picture must show that step.** A picture that repeats the previous one,
   or contradicts its text, is a mistake even when the text is right.
2. **All the steps asked for.** An answer that stops early is worse.
3. Then say how much better one answer is, and grade each: **A** correct and complete,
   **B** a small mistake, **C** wrong or incomplete.
"""
GENERATION_DOMAIN_GUIDELINES = {
    "t2i": "Count the objects and check each colour, shape and word against the prompt.",
    "edit": "Find what the instruction changes in the input picture, then check each result "
    "made exactly that change.",
    "interleaved": "Check each step's picture against its text, and that no step is missing.",
}
