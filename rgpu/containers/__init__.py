"""Kernel compiles inside a container: the engine (`engine`), where each codegen runs
(`placement`), and the runner that turns a plan step into `docker run` (`runner`)."""
