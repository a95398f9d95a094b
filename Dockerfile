# huddle images, built from this repository:
#   docker build --target huddled -t huddle/huddled .   the daemon alone (Debian slim + one binary)
#   docker build --target worker  -t huddle/worker  .   the `huddle` CLI with Python and pytest, to
#                                                        run tester/executor workers on Python projects
# docker-compose.yml builds both. The release profile strips the binaries (Cargo.toml).
# Both images start through deploy/docker-entrypoint.sh, which turns NAME_FILE variables
# (Compose secrets) into NAME.

FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p huddle-daemon -p huddle-cli \
    && cp target/release/huddled target/release/huddle /usr/local/bin/

FROM debian:bookworm-slim AS huddled
RUN useradd --system --home-dir /data --create-home huddle
COPY --from=build /usr/local/bin/huddled /usr/local/bin/huddled
COPY deploy/docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
USER huddle
ENV HUDDLE_LISTEN=0.0.0.0:7700 HUDDLE_DATA_DIR=/data
EXPOSE 7700
ENTRYPOINT ["docker-entrypoint.sh", "huddled"]

FROM debian:bookworm-slim AS worker
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates python3 python3-pytest git \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home huddle
COPY --from=build /usr/local/bin/huddle /usr/local/bin/huddle
COPY deploy/docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
USER huddle
ENTRYPOINT ["docker-entrypoint.sh", "huddle"]
