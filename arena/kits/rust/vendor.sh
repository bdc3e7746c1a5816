#!/bin/sh
# Prepares this folder for an offline build; `arena vendor` runs it on your machine, with
# the network (run it again after changing Cargo.toml): downloads the crates Cargo.lock pins
# for this machine's target into .cargo-home/ (the build's CARGO_HOME), keeping only the
# packed .crate files and the index entries the build reads.
set -eu
export CARGO_HOME="$PWD/.cargo-home"
cargo fetch --locked --target "$(rustc -vV | sed -n 's/^host: //p')"
rm -rf "$CARGO_HOME/registry/src"
