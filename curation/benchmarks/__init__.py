"""One module per published benchmark the studio releases and scores
(one subpackage each, e.g. curation.benchmarks.mrb), each behind the
interface of curation.benchmarks.base, found through the one dispatch table
of curation.benchmarks.registry. Nothing outside this package names one."""
