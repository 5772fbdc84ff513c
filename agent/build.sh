#!/usr/bin/env bash
# Builds agent/build/jvmlens-agent.jar with the JDK's javac and jar (no other tools, no dependencies).
# Without a JDK it says so and exits 0, so `npm run build:agent` does not break machines without Java;
# the agent's tests report themselves skipped there (and fail under CI=true).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/build"

if ! command -v javac >/dev/null 2>&1 || ! command -v jar >/dev/null 2>&1; then
  echo "jvmlens agent: skipped: no JDK found (javac and jar must be on PATH; install openjdk-17-jdk-headless)" >&2
  exit 0
fi

version="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$here/../package.json" | head -n 1)"
revision="$(git -C "$here" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$here" status --porcelain -- . 2>/dev/null)" ]; then revision="$revision-dirty"; fi

# Tests may build concurrently: compile in a private directory, then rename the JAR into place (atomic).
mkdir -p "$build"
work="$(mktemp -d "$build/.work.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/classes/io/jvmlens/agent"
# --release 17: runs on every JVM from 17 on, whichever JDK builds it.
# -XDstringConcat=inline: string '+' as StringBuilder, so the agent never bootstraps
# StringConcatFactory (an invokedynamic warm-up the application would pay for at start).
javac --release 17 -XDstringConcat=inline -encoding UTF-8 -Xlint:all \
  -d "$work/classes" $(find "$here/src/main/java" -name '*.java' | sort)

printf 'version=%s\nrevision=%s\n' "${version:-unknown}" "$revision" > "$work/classes/io/jvmlens/agent/agent.properties"
cat > "$work/MANIFEST.MF" <<MANIFEST
Premain-Class: io.jvmlens.agent.Agent
Can-Redefine-Classes: false
Can-Retransform-Classes: false
Implementation-Title: jvmlens-agent
Implementation-Version: ${version:-unknown}
MANIFEST
jar --create --file "$work/jvmlens-agent.jar" --manifest "$work/MANIFEST.MF" -C "$work/classes" .
mv -f "$work/jvmlens-agent.jar" "$build/jvmlens-agent.jar"
echo "jvmlens agent: built $build/jvmlens-agent.jar (version ${version:-unknown}, revision $revision)"
