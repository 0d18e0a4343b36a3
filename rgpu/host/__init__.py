"""The host half of a build: `cargo build` of the workspace with the backends' features
(`build`), skipped when nothing changed (`stamp`), what the last build made (`state`), and
the commands that use it: `rgpu run` (`run`) and `rgpu test` (`test`)."""
