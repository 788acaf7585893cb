"""A file in VL-RewardBench's official shape and a judge's k runs on it,
written from what is published (MMInstruction/VL-RewardBench's columns;
vl-rewardbench/VL_RewardBench's inference_hf.py output and cal.py), and
cal.py's rule re-derived here line by line (reparse=True,
use_llm_parse=False, as its main calls it) to check the studio's scorer
against.

The IDs cover the official grouping's edges: upper-case ``RLAIF-V…`` and
``RLHF-V…`` (hallucination; r1_reward's copy sent them to general),
lower-case ``rlaif-v…`` (no official prefix: vlfeedback, general), an ID
with neither ``_`` nor ``-``, ``-`` before ``_``; the runs cover agree and
reject majorities, undecided majorities (a tie; unparsed runs counted),
unparsed majorities, "Answer 3 is better", and a run unparsed beside a
majority.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

# id, which response the humans preferred (0 = the first)
PAIRS = [
    ("RLAIF-V_0", 0), ("RLAIF-V_1", 1), ("RLHF-V-Dataset_2", 0), ("RLHF-V-Dataset_3", 1),
    ("rlaif-v_4", 0), ("hallucination_pair-5", 1), ("hallucination_pair-6", 0),
    ("wildvision_battle_7", 0), ("wildvision-battle_8", 1), ("vlfeedback_9", 0),
    ("plainid10", 1), ("mathverse_11", 0), ("mmmu_pro_12", 1), ("mmmu-pro_13", 0),
    ("Mathverse_14", 1), ("RLHF_15", 0),
]  # fmt: skip

WIN = "Criteria first.\nOverall Judgment: **Answer {n}** is better."
# Per pair, its runs: ("good" | "bad" | text, random_number). "good": the
# humans' pick in the shown order; "bad": the other one.
RUNS = {
    "RLAIF-V_0": [("good", 0), ("good", 1), ("bad", 0)],  # agree 2/3
    "RLAIF-V_1": [("bad", 1), ("bad", 0), ("good", 1)],  # reject 2/3
    "RLHF-V-Dataset_2": [("good", 1), ("no verdict here", 0), ("good", 0)],  # agree, one unparsed
    "RLHF-V-Dataset_3": [("good", 0), ("bad", 1), ("nothing", 0), ("nothing", 1)],  # unparsed 2/4
    "rlaif-v_4": [("good", 0), ("bad", 1)],  # tie: undecided
    "hallucination_pair-5": [("nothing", 0), ("nothing", 1), ("good", 0)],  # unparsed majority
    "hallucination_pair-6": [("Overall Judgment: Answer 1 and Answer 2 are equal", 0)] * 3,
    "wildvision_battle_7": [("Therefore Answer 3 is better", 1)] * 3,  # 3 ≠ rejected: agree
    "wildvision-battle_8": [("good", 0), ("good", 1), ("good", 0), ("bad", 1), ("bad", 0)],
    "vlfeedback_9": [("bad", 0), ("bad", 1), ("bad", 1)],
    "plainid10": [("good", 1)],
    "mathverse_11": [("good", 0), ("good", 1), ("good", 1)],
    "mmmu_pro_12": [("bad", 0), ("good", 1), ("nothing", 0)],  # undecided: 1/1/1
    "mmmu-pro_13": [("good", 1), ("good", 0), ("bad", 0)],
    "Mathverse_14": [("good", 0), ("good", 0), ("good", 0)],  # upper-case M: general
    # RLHF_15 has no prediction
}


def records() -> list[dict]:
    """The pairs as the official records (JSONL of the Hub's columns)."""
    out = []
    for n, (pair_id, preferred) in enumerate(PAIRS):
        out.append({
            "id": pair_id, "query": f"<image>\nWhat is in picture {n}?",
            "response": [f"first answer {n}", f"second answer {n} ✓"],
            "image": f"images/img_{n}.png",
            "human_ranking": [0, 1] if preferred == 0 else [1, 0],
            "models": ["model-a", "model-b"], "judge": "human",
            "rationale": f"because {n}", "query_source": pair_id.split("_")[0],
            "ground_truth": None,
        })  # fmt: skip
    return out


def output_of(kind: str, preferred: int, number: int) -> str:
    """A run's judge text: "good" names the preferred response's shown position."""
    if kind not in ("good", "bad"):
        return kind
    shown_first = 0 if number == 0 else 1  # the response shown as Answer 1
    good = 1 if preferred == shown_first else 2
    return WIN.format(n=good if kind == "good" else 3 - good)


def studio_lines() -> str:
    """The runs as the studio's predictions shape: a line per pair."""
    preferred = dict(PAIRS)
    lines = []
    for pair_id, runs in RUNS.items():
        given = [{"output": output_of(k, preferred[pair_id], n), "random_number": n}
                 for k, n in runs]  # fmt: skip
        lines.append(json.dumps({"id": pair_id, "runs": given}, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def official_lines() -> str:
    """The runs as inference_hf.py writes them: one line per run, k per pair."""
    by_id = {r["id"]: r for r in records()}
    preferred = dict(PAIRS)
    lines = []
    for pair_id, runs in RUNS.items():
        r = by_id[pair_id]
        for kind, number in runs:
            lines.append(json.dumps({
                "id": pair_id, "query": r["query"], "response": r["response"],
                "ranking": r["human_ranking"], "models": r["models"], "judge": r["judge"],
                "rationale": r["rationale"],
                "meta": {"filter_choice": output_of(kind, preferred[pair_id], number),
                         "random_number": number, "flag_status": "stale"},
                "query_source": r["query_source"],
            }, ensure_ascii=False))  # fmt: skip
    return "".join(line + "\n" for line in lines)


# --- cal.py, re-derived (its lines kept; prints and the LLM parse left out) ------------------


def get_dataset_from_id(id: str):
    def get_id_prefix(id_value: str):
        split_index = min(
            (id_value.find("_"), id_value.find("-")), key=lambda x: x if x != -1 else float("inf")
        )
        return id_value[:split_index] if split_index != -1 else id_value

    id_prefix = get_id_prefix(id)
    if id_prefix == "RLAIF":
        return "rlaif-v"
    elif id_prefix == "RLHF":
        return "rlhf-v"
    elif id_prefix == "mathverse" or id_prefix == "mmmu":
        return "reasoning_tasks"
    elif id_prefix == "wildvision":
        return "wildvision-battle"
    elif id_prefix == "hallucination":
        return "povid"
    else:
        return "vlfeedback"


def cal_py(lines: list[dict], k: int = 10**9) -> dict:
    """cal.py's distribution(reparse=True) → classify → distribution_dataset,
    returning what it prints (group accuracies, overall, macro) as numbers."""
    distribution: dict = {}
    for item in lines:
        id = item["id"] + item["query"] + "\t".join(sorted(item["response"]))
        dataset = get_dataset_from_id(item["id"])
        ranking = item["ranking"]
        random_number = item["meta"]["random_number"]
        rejected_response_choice = ranking.index(1 if random_number == 0 else 0) + 1
        response = item["meta"]["filter_choice"]
        pattern = r"(?:Overall Judgment|Therefore)\s*.*\s*-*\s*Answer\s*(\d+)\s*is\s*(?:the\s*)?(?:slightly\s*)?better"  # noqa: E501
        match = re.search(pattern, response.replace("\n", "").replace("*", ""), re.IGNORECASE)
        flag_status = "doesntMatch"
        if match:
            flag_status = "reject" if int(match.group(1)) == rejected_response_choice else "agree"
        if id not in distribution:
            distribution[id] = {"agree": 0, "reject": 0, "doesntMatch": 0, "dataset": dataset}
        elif sum(distribution[id][s] for s in ("agree", "reject", "doesntMatch")) >= k:
            continue
        distribution[id][flag_status] += 1
    for entry in distribution.values():
        agree, reject, doesnt = entry["agree"], entry["reject"], entry["doesntMatch"]
        total_count = agree + reject + doesnt
        if agree > total_count / 2:
            entry["classify"] = "agree"
        elif reject > total_count / 2:
            entry["classify"] = "reject"
        elif doesnt > total_count / 2:
            entry["classify"] = "doesntMatch"
        else:
            entry["classify"] = "other"
    group_mapping = {
        "vlfeedback": "general", "povid": "hallucination", "reasoning_tasks": "reasoning",
        "rlhf-v": "hallucination", "rlaif-v": "hallucination", "wildvision-battle": "general",
    }  # fmt: skip
    group_correct: dict = defaultdict(lambda: 0)
    group_total: dict = defaultdict(lambda: 0)
    for entry in distribution.values():
        group = group_mapping[entry["dataset"]]
        group_correct[group] += entry["classify"] == "agree"
        group_total[group] += entry["classify"] in ("agree", "reject")
    task_list = ["reasoning", "hallucination", "general"]
    return {
        "groups": {g: group_correct[g] / group_total[g] for g in task_list},
        "macro": sum(group_correct[g] / group_total[g] for g in task_list) / 3,
        "overall": sum(group_correct[g] for g in task_list)
        / sum(group_total[g] for g in task_list),
    }
