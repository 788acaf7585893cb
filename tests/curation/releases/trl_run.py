"""Train on a release with TRL, offline, on tiny models built from configs
(run by test_trl.py in a subprocess, in the venv `make check-trl` makes).

    python tests/curation/releases/trl_run.py <release folder> <split>

Loads the release through its card's `configs:` (`load_dataset(<folder>)`
and `load_dataset(<folder>, "trl")`), runs TRL's format helpers on its rows,
then two optimiser steps of `DPOTrainer` on a tiny Qwen2.5-VL (vision: the
rows' images go through the processor) and of `RewardTrainer` on a tiny
Qwen2 (text only: images dropped). Nothing is downloaded: the tokenizer is
a byte-level BPE without merges, the image processor and the chat template
are built here. Prints one JSON line of what it saw.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time

# A Qwen2-VL-style chat template: content is a string or a list of typed
# parts; an image part becomes the vision tokens the processor expands.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
           "<|image_pad|>", "<|video_pad|>"]  # fmt: skip


def tokenizer():
    """Qwen2's tokenizer class over a vocabulary of the 256 byte symbols (no
    merges, so every byte is a token) and Qwen's special tokens."""
    from tokenizers import AddedToken, pre_tokenizers
    from transformers import Qwen2Tokenizer

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {"<|endoftext|>": 0, **{ch: i + 1 for i, ch in enumerate(alphabet)}}
    tok = Qwen2Tokenizer(vocab=vocab, merges=[])
    tok.add_tokens([AddedToken(t, special=True) for t in SPECIAL])
    tok.chat_template = CHAT_TEMPLATE
    return tok


def vision_model(tok):
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    torch.manual_seed(0)
    config = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": len(tok),
            "hidden_size": 16,
            "intermediate_size": 32,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "max_position_embeddings": 4096,
            "bos_token_id": 0,
            "eos_token_id": tok.convert_tokens_to_ids("<|im_end|>"),
            "pad_token_id": 0,
            "rope_parameters": {
                "rope_type": "default",
                "mrope_section": [1, 1, 2],
                "rope_theta": 10000.0,
            },
        },
        vision_config={
            "depth": 1,
            "hidden_size": 16,
            "intermediate_size": 32,
            "num_heads": 2,
            "patch_size": 2,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "window_size": 8,
            "out_hidden_size": 16,
            "fullatt_block_indexes": [0],
        },
        image_token_id=tok.convert_tokens_to_ids("<|image_pad|>"),
        video_token_id=tok.convert_tokens_to_ids("<|video_pad|>"),
        vision_start_token_id=tok.convert_tokens_to_ids("<|vision_start|>"),
        vision_end_token_id=tok.convert_tokens_to_ids("<|vision_end|>"),
        pad_token_id=0,
        eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"),
        bos_token_id=0,
    )
    return Qwen2_5_VLForConditionalGeneration(config)


def processor(tok):
    from transformers import Qwen2_5_VLProcessor, Qwen2VLImageProcessor, Qwen2VLVideoProcessor

    # 2-pixel patches merged 2x2: an 8x8 image is 4 vision tokens.
    sizes = {"patch_size": 2, "merge_size": 2, "temporal_patch_size": 2,
             "size": {"shortest_edge": 16, "longest_edge": 64}}  # fmt: skip
    return Qwen2_5_VLProcessor(
        image_processor=Qwen2VLImageProcessor(**sizes),
        tokenizer=tok,
        video_processor=Qwen2VLVideoProcessor(**sizes),
        chat_template=CHAT_TEMPLATE,
    )


def text_model(tok):
    import torch
    from transformers import Qwen2Config, Qwen2ForSequenceClassification

    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        num_labels=1,
        pad_token_id=0,
    )
    return Qwen2ForSequenceClassification(config)


def steps_of(trainer) -> int:
    return trainer.state.global_step


def main(folder: str, split: str) -> dict:
    from datasets import load_dataset
    from trl import DPOConfig, DPOTrainer, RewardConfig, RewardTrainer
    from trl.data_utils import (
        apply_chat_template,
        is_conversational,
        maybe_apply_chat_template,
        prepare_multimodal_messages,
    )

    out: dict = {}
    records = load_dataset(folder)
    out["default_splits"] = sorted(records)
    out["default_columns"] = records[split].column_names
    data = load_dataset(folder, "trl")
    out["trl_splits"] = sorted(data)
    train = data[split]
    out["trl_columns"] = train.column_names
    out["trl_features"] = {k: str(v) for k, v in train.features.items()}
    row = train[0]
    out["image_type"] = type(row["images"][0]).__name__
    out["is_conversational"] = is_conversational(row)

    tok = tokenizer()
    text_row = {k: v for k, v in row.items() if k != "images"}
    templated = maybe_apply_chat_template(text_row, tok)
    out["templated"] = templated
    # What TRL's vision collator does: the placeholder goes before the prompt text.
    prompt = prepare_multimodal_messages(row["prompt"], images=row["images"])
    out["multimodal_prompt"] = [[part["type"] for part in message["content"]] for message in prompt]
    proc = processor(tok)
    vision_text = apply_chat_template(
        {"prompt": prompt, "chosen": prepare_multimodal_messages(row["chosen"]),
         "rejected": prepare_multimodal_messages(row["rejected"])}, proc
    )  # fmt: skip
    out["vision_prompt"] = vision_text["prompt"]

    common = {
        "max_steps": 2,
        "per_device_train_batch_size": 2,
        "learning_rate": 1e-3,
        "report_to": "none",
        "save_strategy": "no",
        "logging_steps": 1,
        "use_cpu": True,
        "gradient_checkpointing": False,
        "dataloader_num_workers": 0,
    }
    with tempfile.TemporaryDirectory() as tmp:
        started = time.monotonic()
        dpo = DPOTrainer(
            model=vision_model(tok),
            ref_model=vision_model(tok),  # the same weights (seeded); nothing to load
            args=DPOConfig(output_dir=f"{tmp}/dpo", max_length=None, **common),
            train_dataset=train,
            processing_class=proc,
        )
        result = dpo.train()
        out["dpo"] = {
            "steps": steps_of(dpo),
            "loss": result.training_loss,
            "seconds": round(time.monotonic() - started, 1),
        }
        started = time.monotonic()
        reward = RewardTrainer(
            model=text_model(tok),
            args=RewardConfig(output_dir=f"{tmp}/reward", **common),
            train_dataset=train.remove_columns("images"),
            processing_class=tok,
        )
        result = reward.train()
        out["reward"] = {
            "steps": steps_of(reward),
            "loss": result.training_loss,
            "seconds": round(time.monotonic() - started, 1),
        }
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2]), default=str))
