"""Multimodal RewardBench: see .benchmark (BENCHMARK is its registry entry)."""
