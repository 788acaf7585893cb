"""What benchmarks whose release file is JSONL records per domain share, so
that a new one is a small package of its own terms (it names no benchmark;
docs/decisions.md, "Records benchmarks", has the recipe):

- records.RecordsBenchmark: the base class (set key, title, prefix, file,
  label, position; add score (score_one_file), leaderboard, score_files,
  judge; detects asks the package's scoring.looks_like_predictions), with
  the mixins OwnApiReport and PairJudgeBothOrders;
- release: its members, file writing, Part and provenance lines (a
  benchmark of other files, e.g. JSON task files, uses records_part and
  provenance alone; prefix_part, the part of one export-Category folder);
- card: RecordsCardSection and the counts its manifest and card share (pure);
- judge: the chat-completions request and the [[A]]/[[B]] pick (pure);
- predictions: a JSONL predictions file's lines and first object (pure).
"""
