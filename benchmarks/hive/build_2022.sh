#!/usr/bin/env bash
# Build the real Hive Arena and the 2022 competition's agents from their public sources into a
# temporary folder, for `python -m agent.games.hive.eval --arena-command ... --b cmd:...`.
# Nothing of theirs enters this repository: the sources are checked out by you (e.g. with git
# clone) and copied into OUT before building.
#
#   benchmarks/hive/build_2022.sh ARENA_SRC ERIKPEIK_SRC [KONA3B_SRC] OUT
#
#   ARENA_SRC     a checkout of github.com/hivehelsinki/hive-arena (the real arena)
#   ERIKPEIK_SRC  a checkout of github.com/erikpeik/hive-arena (epk_*, spy_*, thinkemoji_*, ...)
#   KONA3B_SRC    optional: a checkout of github.com/kona3b/42_Hive_Arena (team tribe13's agents)
#   OUT           where to build (created; e.g. /tmp/hive2022)
#
# Results: OUT/arena/bin/arena, OUT/agents/NAME (one executable per agent), and the list printed.
# Each agent is linked against the real arena's libagent. -fcommon: several 2022 agents define
# the same global in more than one file, which gcc >= 10 rejects by default.
set -euo pipefail

if [[ $# -lt 3 || $# -gt 4 ]]; then
    sed -n 2,16p "$0" >&2
    exit 2
fi
arena_src=$1
erik_src=$2
if [[ $# -eq 4 ]]; then kona_src=$3; out=$4; else kona_src=; out=$3; fi
for d in "$arena_src/src" "$erik_src"; do
    [[ -d $d ]] || { echo "not a directory: $d" >&2; exit 2; }
done

mkdir -p "$out/agents"
out=$(cd "$out" && pwd)
flags="-Wall -Wextra -O2 -fcommon"

echo "== arena (from $arena_src)"
rm -rf "$out/arena"
cp -r "$arena_src" "$out/arena"
make -s -C "$out/arena/src" >/dev/null
ls -l "$out/arena/bin/arena"
if make -s -C "$out/arena/example-agent" >/dev/null 2>&1; then
    cp "$out/arena/example-agent/agent" "$out/agents/example-agent"
    echo "built example-agent (the arena's C example agent)"
fi

build_tree() {  # build_tree SRC_TREE NAME_PREFIX: every folder with a Makefile that builds "agent"
    local tree=$1 prefix=$2 dir name
    rm -rf "$out/tree-$prefix"
    cp -r "$tree" "$out/tree-$prefix"
    # Every agent's Makefile links ../bin/libagent.a and includes ../src: use the real arena's.
    rm -rf "$out/tree-$prefix/src" "$out/tree-$prefix/bin"
    cp -r "$out/arena/src" "$out/tree-$prefix/src"
    cp -r "$out/arena/bin" "$out/tree-$prefix/bin"
    for dir in "$out/tree-$prefix"/*/; do
        dir=${dir%/}
        name=$(basename "$dir")
        [[ -f $dir/Makefile && $name != src && $name != tools && $name != bin ]] || continue
        [[ $name == example-agent* ]] && name=$prefix-$name
        if make -s -C "$dir" CFLAGS="$flags" >"$out/agents/$name.build.log" 2>&1 && [[ -x $dir/agent ]]; then
            cp "$dir/agent" "$out/agents/$name"
            echo "built $name"
        else
            echo "FAILED $name (see $out/agents/$name.build.log)"
        fi
    done
}

echo "== 2022 agents (from $erik_src)"
build_tree "$erik_src" erikpeik
if [[ -n $kona_src ]]; then
    echo "== team tribe13's agents (from $kona_src)"
    build_tree "$kona_src" kona3b
fi
echo "arena:  $out/arena/bin/arena {port} {log}"
echo "agents: $out/agents/NAME {host} {port}"
