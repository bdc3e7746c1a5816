#!/bin/sh
# Prepares this folder for an offline build; `arena vendor` runs it on your machine, with
# the network (run it again after changing go.mod or referee.proto):
#  * copies the modules go.mod requires into vendor/ (the build uses them, offline);
#  * generates the Go stubs of uno_arena/v1/referee.proto into uno_arena/v1/, with the
#    protoc-gen-go and protoc-gen-go-grpc versions go.mod pins as tools (needs protoc).
set -eu
go mod vendor
protoc --plugin=protoc-gen-go="$(go tool -n protoc-gen-go)" \
       --plugin=protoc-gen-go-grpc="$(go tool -n protoc-gen-go-grpc)" \
       --go_out=. --go-grpc_out=. uno_arena/v1/referee.proto
