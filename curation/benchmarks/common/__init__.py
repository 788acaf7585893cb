"""What benchmarks whose release file is JSONL records per domain share, so
that a new one is a small package of its own terms (it names no benchmark;
docs/decisions.md, "Records benchmarks", has the recipe):

- records.RecordsBenchmark: the base class (set key, title, prefix, file,
  label, position; add detects, score, leaderboard, score_files, judge);
- release: its members, file writing, Part and provenance lines (a
  benchmark of other files, e.g. JSON task files, uses records_part and
  provenance alone);
- card: RecordsCardSection and the counts its manifest and card share (pure).
"""
