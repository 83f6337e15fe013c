#!/usr/bin/env bash
# Build Apicurio Registry (Confluent-compatible schema registry) into DEST_DIR.
#
#   scripts/registry/install.sh DEST_DIR
#
# Result: DEST_DIR/app/registry-runner.jar + DEST_DIR/app/lib/ (run it with run.sh).
# Idempotent: does nothing when DEST_DIR already holds a build of the same pom.xml.
# Needs: Java 17+ (java on PATH or JAVA_HOME), Maven 3.8+, access to Maven Central.
# Env:   MAVEN_REPO_LOCAL  optional Maven local repository (default: ~/.m2/repository)
#        MAVEN_OPTS / MVN  passed through / maven binary (default: mvn)
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DEST_DIR" >&2
  exit 2
fi

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DEST="$1"
mkdir -p "$DEST"
DEST="$(cd "$DEST" && pwd)"
MVN="${MVN:-mvn}"

stamp="$(cat "$HERE/pom.xml" | sha256sum | cut -d' ' -f1)"
if [ -f "$DEST/app/.stamp" ] && [ "$(cat "$DEST/app/.stamp")" = "$stamp" ] \
   && [ -f "$DEST/app/registry-runner.jar" ] && [ -d "$DEST/app/lib" ]; then
  echo "registry: already installed in $DEST/app"
  exit 0
fi

command -v "$MVN" >/dev/null || { echo "registry: maven ($MVN) not found" >&2; exit 1; }
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
jv="$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
if [ -z "$jv" ] || [ "${jv%%.*}" -lt 17 ]; then
  echo "registry: need Java 17+, found '${jv:-none}'" >&2
  exit 1
fi

build="$DEST/build"
rm -rf "$build"
mkdir -p "$build"
cp "$HERE/pom.xml" "$build/pom.xml"

args=(-B -ntp -q -Dstyle.color=never -f "$build/pom.xml" -DskipTests package)
if [ -n "${MAVEN_REPO_LOCAL:-}" ]; then
  args=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL" "${args[@]}")
fi
echo "registry: building with $MVN (first run downloads ~210 MB from Maven Central)..."
start=$(date +%s)
"$MVN" "${args[@]}"

tmp="$DEST/app.new"
rm -rf "$tmp"
mkdir -p "$tmp"
cp "$build"/target/*-runner.jar "$tmp/registry-runner.jar"
cp -r "$build/target/lib" "$tmp/lib"
echo "$stamp" > "$tmp/.stamp"
rm -rf "$DEST/app"
mv "$tmp" "$DEST/app"
rm -rf "$build"
echo "registry: installed in $DEST/app ($(( $(date +%s) - start ))s)"
