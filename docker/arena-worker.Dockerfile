# The UNO Arena referee/worker image: Python, the arena package, bubblewrap, and the
# runtimes the sample bots need (node for JavaScript; the gRPC C++ libraries and a
# toolchain so a worker can run a C++ bot's build step once).
#
#   docker build -f docker/arena-worker.Dockerfile -t uno-arena-worker .
#
# bubblewrap inside a container needs user namespaces and the syscalls that create them:
# run with `--security-opt seccomp=unconfined --security-opt apparmor=unconfined` (or a
# seccomp profile that allows unshare/clone with CLONE_NEWUSER and mount), on a host where
# unprivileged user namespaces are enabled (Debian: sysctl kernel.unprivileged_userns_clone=1;
# Ubuntu 24.04+: kernel.apparmor_restrict_unprivileged_userns=0). compose.yaml sets these.
FROM python:3.11-slim-bookworm

RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      bubblewrap passt nodejs npm \
      g++ cmake make pkg-config libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/uno-arena
COPY pyproject.toml README.md ./
COPY arena ./arena
COPY protos ./protos
COPY sample_bots ./sample_bots
RUN pip install --no-cache-dir .

# Bots are unpacked per content hash here (one cache per worker container).
ENV ARENA_BOT_CACHE=/var/cache/uno-arena/bots
RUN mkdir -p /var/cache/uno-arena/bots

CMD ["arena", "--help"]
