"""The tick: what happens to a set of checks in one run, as named stages in order
(`pipeline.STAGES`: replay the spool, find and claim windows, load sources, evaluate, judge,
record, publish readiness, remember windows, reconcile mutes, deliver, summarize), with one entry
point, `pipeline.run_tick`. Modules are imported on use: Spark loads only when something runs."""
