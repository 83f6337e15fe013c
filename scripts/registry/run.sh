#!/usr/bin/env bash
# Run the schema registry built by install.sh, in the foreground.
#
#   scripts/registry/run.sh DEST_DIR PORT DATA_DIR
#
# Binds 127.0.0.1:PORT. Confluent Schema Registry API base URL:
#   http://127.0.0.1:PORT/apis/ccompat/v7
# DATA_DIR: H2 database files go to DATA_DIR/registry.mv.db (kept across restarts).
#           Pass "-" for a purely in-memory registry.
# Env:  REGISTRY_JAVA_OPTS  extra JVM options (default heap cap: -Xmx256m)
#       JAVA_HOME           Java 17+ to use (default: java on PATH)
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 DEST_DIR PORT DATA_DIR|-" >&2
  exit 2
fi
DEST="$1"
PORT="$2"
DATA="$3"

jar="$DEST/app/registry-runner.jar"
if [ ! -f "$jar" ]; then
  echo "registry: $jar missing; run scripts/registry/install.sh $DEST first" >&2
  exit 1
fi

if [ "$DATA" = "-" ]; then
  export REGISTRY_DATASOURCE_URL="jdbc:h2:mem:registry_db"
else
  mkdir -p "$DATA"
  DATA="$(cd "$DATA" && pwd)"
  # WRITE_DELAY=0: commit to disk at once, so data survives a kill -9.
  export REGISTRY_DATASOURCE_URL="jdbc:h2:file:$DATA/registry;DB_CLOSE_ON_EXIT=FALSE;WRITE_DELAY=0"
fi

JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
# shellcheck disable=SC2086
exec "$JAVA" \
  -Xms32m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
  ${REGISTRY_JAVA_OPTS:-} \
  -Dquarkus.http.host=127.0.0.1 \
  -Dquarkus.http.port="$PORT" \
  -D%prod.quarkus.datasource.jdbc.min-size=1 \
  -D%prod.quarkus.datasource.jdbc.initial-size=1 \
  -D%prod.quarkus.datasource.jdbc.max-size=20 \
  -jar "$jar"
