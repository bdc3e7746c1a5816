#!/bin/sh
# The build step (bot.toml), in the sandbox and offline: generates the Go stubs of
# uno_arena/v1/referee.proto with the plugin versions go.mod pins as tools (needs protoc),
# then compiles a static binary (no cgo: a faster build). The modules come from the
# referee's fetch step (go.sum), or from vendor/ when the folder has one.
set -eu
protoc --plugin=protoc-gen-go="$(go tool -n protoc-gen-go)" \
       --plugin=protoc-gen-go-grpc="$(go tool -n protoc-gen-go-grpc)" \
       --go_out=. --go-grpc_out=. uno_arena/v1/referee.proto
CGO_ENABLED=0 exec go build -trimpath -o bot .
