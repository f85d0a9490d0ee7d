# headroom's image: the binary, the libraries it links, the CA certificates and a non-root
# user (65532, the user `headroom kube`'s pods run as), on an empty base: no shell, no
# package manager, nothing else to patch. docs/distributed.md, "The image", says how to
# build and push it.
#
#   podman build -t registry.example/headroom:0.1.0 .
#       compiles headroom in the Rust image (the build stage) and keeps only its root file
#       system;
#   image/rootfs.sh target/release/headroom target/image-rootfs &&
#   podman build --build-arg ROOTFS=prebuilt -t registry.example/headroom:0.1.0 .
#       takes a binary built here instead (no registry needed: the image carries this
#       machine's libraries, so build on the distribution the Rust image is, or older).

# Which stage the root file system comes from: `build` (compiled in the Rust image) or
# `prebuilt` (target/image-rootfs, laid out by image/rootfs.sh). The stage not named is not
# built.
ARG ROOTFS=build
ARG RUST_IMAGE=docker.io/library/rust:1-slim-bookworm

FROM ${RUST_IMAGE} AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked && image/rootfs.sh target/release/headroom /rootfs

FROM scratch AS prebuilt
COPY target/image-rootfs/ /rootfs/

FROM ${ROOTFS} AS rootfs
# A stage of its own rather than a bare alias of the one named: Debian 12's podman (buildah
# 1.28) fails a --layers=false build with a stage that is another stage's image unchanged.
LABEL org.opencontainers.image.title=headroom

FROM scratch
COPY --from=rootfs /rootfs/ /
# The runs go here when no volume is mounted over it; the user must write them.
COPY --from=rootfs --chown=65532:65532 /rootfs/runs/ /runs/
ENV PATH=/usr/local/bin
USER 65532:65532
WORKDIR /runs
LABEL org.opencontainers.image.title=headroom
ENTRYPOINT ["/usr/local/bin/headroom"]
