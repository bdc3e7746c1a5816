#!/bin/sh
# The build step (bot.toml): in the sandbox, offline, from the crates in .cargo-home/.
set -eu
export CARGO_HOME="$PWD/.cargo-home"
exec cargo build --release --offline --locked
