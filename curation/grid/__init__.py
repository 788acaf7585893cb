"""The data grid: every item of a project, filtered, sorted and paged on the
server, with bulk curator actions (issue 31, item 6)."""
