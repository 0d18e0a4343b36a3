"""SPIR-V in, SPIR-V out: the passes rgpu runs on rust-gpu's modules before any driver or
naga sees them, one module a pass, each run through passes.py's one interface and in the
order passes.py lists (BEFORE_OPT, AFTER_OPT, FOR_NAGA); words.py and opcodes.py read and
write the binary for all of them, module.py reads a module's entry points and runs spirv-val,
sources.py maps instructions back to rust-gpu's source lines for the portability report.

Passes over naga's IR are Rust, in crates/rgpu-naga/src (flatten.rs, coalesce.rs): they run
inside rgpu-naga on the module naga read from what these passes made."""
