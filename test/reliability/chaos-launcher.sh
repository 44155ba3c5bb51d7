#!/bin/sh
# The chaos suite's launcher: a witness around test/fixture/fake-dsh.sh. Before handing
# over (exec, same pid), it takes one free token of the global pool and one of its
# project's pool with flock(1), from directives in the task file:
#   TOKENS: <global dir> <cap> <project dir> <project cap>
# The locks are held by the job's processes and released by the kernel the instant the
# last of them dies, however it dies (SIGKILL of the group included). A launcher that
# finds no free token logs "over <which> <out-dir>" to the EVENTS file: a cap was exceeded.
task=""; out=""
prev=""
for a in "$@"; do
  case "$prev" in --task-file) task="$a" ;; --out-dir) out="$a" ;; esac
  prev="$a"
done
here=$(dirname "$0")
tokens=""
if [ -n "$task" ] && [ -r "$task" ]; then
  tokens=$(sed -n 's/^TOKENS: *//p' "$task" | head -n 1)
  events=$(sed -n 's/^EVENTS: *//p' "$task" | head -n 1)
fi
if [ -n "$tokens" ]; then
  field() { echo "$tokens" | cut -d' ' -f"$1"; }
  gdir=$(field 1); gcap=$(field 2); pdir=$(field 3); pcap=$(field 4)
  take() { # take <dir> <cap> <fd>
    mkdir -p "$1"
    i=0
    while [ "$i" -lt "$2" ]; do
      eval "exec $3>\"$1/$i\""
      if flock -n "$3"; then return 0; fi
      i=$((i + 1))
    done
    eval "exec $3>&-"
    return 1
  }
  take "$gdir" "$gcap" 8 || echo "over global $out" >> "$events"
  take "$pdir" "$pcap" 7 || echo "over project $out" >> "$events"
fi
exec "$here/../fixture/fake-dsh.sh" "$@"
