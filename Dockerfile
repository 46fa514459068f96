# The etcdbench image: one static binary, nothing else (no shell, no fio).
#
#   docker build -t etcdbench:0.1.0-dev .
#   docker build --build-arg VERSION=1.2.3 -t registry.example.com/etcdbench:1.2.3 .
#   docker buildx build --platform linux/amd64,linux/arm64 -t registry.example.com/etcdbench:1.2.3 --push .
#
# The binary is built with CGO_ENABLED=0, so it needs no C library and runs on
# distroless/static (deploy/kubernetes/image_test.go checks that such a build is
# static and takes the version). The image runs as the distroless nonroot user
# (65532). Writing into a root-owned hostPath directory, as the Kubernetes Job
# in deploy/kubernetes does, needs that Job to run the container as UID 0 with
# every capability dropped, or a directory made for UID 65532 beforehand: see
# docs/kubernetes.md.

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
ARG TARGETOS=linux
ARG TARGETARCH
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags "-s -w -X etcdbench/internal/result.Version=$VERSION" -o /out/etcdbench ./cmd/etcdbench

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/etcdbench /etcdbench
USER 65532:65532
ENTRYPOINT ["/etcdbench"]
