"""Making workspaces: `rgpu new` renders a template (`new`), `rgpu init` adds rgpu to an
existing Cargo project (`init`), both vendor rgpu's Rust crates (`vendor`); project names
are checked in `naming`."""
