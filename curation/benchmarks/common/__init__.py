"""What the benchmarks whose release file is JSONL records per domain share
(a benchmark of other files, e.g. one JSON task file per domain, uses the
release-part, card and stored-file helpers alone), so that a new benchmark
of that kind is one small module of its own terms. It names no benchmark.

Such a benchmark's items are those of the domains whose export Category
starts with its `prefix` (``<key>/<category>``); its release holds one JSONL
file `file` (one record a line, its manifest section under its key, its
card section generated from that), and its predictions are scored against
the records of that file. Its package then holds:

- ``benchmark.py``: a subclass of `records.RecordsBenchmark` setting `key`,
  `title`, `prefix`, `file`, `label` and `position`, plus what is its own
  (`detects`, `score`, `leaderboard`, `score_files`, the judge members; the
  base refuses judge runs when it has no judge prompt, `NO_JUDGE`);
- ``release_files.py``: `write_file(folder, rows, salt=, domains=)` writing
  its records with `files.write_lines` and `files.left_out` (skipped
  members), returning the records written (each with item_id, external_id,
  released_id, domain, provenance; `mrb_shaped` if it is also a record of
  the pair layout);
- ``release_part.py``: `prepare(ctx)` = `files.records_part(...)` with its
  manifest section and the provenance line of a record (`files.own_line`);
- ``card.py`` (pure, no Django): a subclass of `card.RecordsCardSection`
  with its manifest section and its card lines.

The registry finds the benchmark as any other (this package has no
``benchmark`` module, so it is not one).
"""
