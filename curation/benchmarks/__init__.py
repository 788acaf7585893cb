"""One module per published benchmark the studio releases and scores
(curation.benchmarks.mrb, curation.benchmarks.mmrb2), each behind the
interface of curation.benchmarks.base, found through the one dispatch table
of curation.benchmarks.registry. Nothing outside this package names one."""
