"""Multimodal RewardBench 2: see .benchmark (BENCHMARK is its registry entry)."""
