"""What mountbench runs on an ``ssh://`` client (POSIX ``sh``, Linux /proc), as text, and
the facts script's output read back (pure). clients/sshremote.py sends them.

- SERVE_SCRIPT: the watcher. Ends leftovers of earlier runs (directories whose watcher is
  gone: their marked processes), starts ``fio --server`` on a unix socket in its own 0700
  directory under the run marker, writes the start barrier's script, says ``READY PID DIR``
  (the socket is DIR/fio.sock), then waits for its stdin to close (or for the controller's
  heartbeat to stop) and stops everything it started.
- FACTS_SCRIPT: kernel, CPU, RAM, fio's version, the machine's identity (machine-id, boot
  id), and what each path given is there.
- ALIVE_SCRIPT: does fio's server (this pid, this marker) still run?
- CLOCK_SCRIPT: answers each line it reads with its clock (epoch ns).
"""

from __future__ import annotations

from typing import Any

RUN_VAR = "MOUNTBENCH_REMOTE_RUN"  # the marker on fio's server and every process it forks
WATCH_VAR = "MOUNTBENCH_REMOTE_WATCH"  # the marker on the watcher: its run is alive
SOCKET_NAME = "fio.sock"  # fio's server's socket in the run directory (SERVE_SCRIPT's $sock)
UNKNOWN = "unknown"

COMMON_SH = r"""
base="${XDG_CACHE_HOME:-$HOME/.cache}/mountbench/remote"
marked() {  # pids of the processes carrying the marker $1
    grep -lsxzF "MOUNTBENCH_REMOTE_RUN=$1" /proc/[0-9]*/environ 2>/dev/null | sed 's#^/proc/\([0-9]*\)/.*#\1#'
}
end_marked() {  # end the processes carrying the marker $1; how many there were
    n=0
    for sig in TERM KILL; do
        pids=$(marked "$1")
        [ -z "$pids" ] && break
        [ $sig = TERM ] && n=$(echo $pids | wc -w)
        kill -$sig $pids 2>/dev/null
        i=0; while [ $i -lt 20 ] && [ -n "$(marked "$1")" ]; do sleep 0.1; i=$((i+1)); done
    done
    echo $n
}
"""

# the start barrier (`mountbench serve` writes it too): a job's exec_prerun, run by fio in each
# job process after its setup, before its I/O; it waits until $1 (epoch ns, this machine's clock)
BARRIER_SH = r"""now=$(date +%s%N); d=$(( $1 - now ))
[ $d -gt 0 ] && sleep "$(( d / 1000000000 )).$(printf '%09d' $(( d % 1000000000 )))"
exit 0
"""

# $1: this client's token (the run's token, "-", its index), $2: seconds without a heartbeat to stop
SERVE_SCRIPT = (
    COMMON_SH
    + r"""
token=$1
(umask 077; mkdir -p "$base") || { echo "ERROR cannot create $base"; exit 1; }
for old in "$base"/*; do
    [ -d "$old" ] || continue
    name=${old##*/}
    case "$name" in "${token%-*}"-*) continue ;; esac  # this run's (several clients may share a machine)
    w=$(cat "$old/watcher.pid" 2>/dev/null)
    if [ -n "$w" ] && grep -qsxzF "MOUNTBENCH_REMOTE_WATCH=$name" /proc/$w/environ; then continue; fi
    n=$(end_marked "$name")
    rm -rf "$old"
    echo "LEFTOVER $name $n"
done
dir="$base/$token"
# only this user can enter it: fio's socket in it takes no connection from anyone else
(umask 077; mkdir "$dir") && chmod 700 "$dir" && cd "$dir" || { echo "ERROR cannot create $dir"; exit 1; }
sock="$dir/fio.sock"
echo $$ > watcher.pid
: > heartbeat; : > checked
# the start barrier: a job's exec_prerun, waiting until the instant (epoch ns, this clock) given
cat > barrier.sh <<'BARRIER'
"""
    + BARRIER_SH
    + r"""BARRIER
stopping() {
    end_marked "$token" > /dev/null
    for w in $(grep -lsxzF "MOUNTBENCH_REMOTE_WATCH=$token" /proc/[0-9]*/environ | sed 's#^/proc/\([0-9]*\)/.*#\1#'); do
        [ "$w" != $$ ] && kill "$w" 2>/dev/null
    done
    cd /; rm -rf "$dir"
}
trap 'stopping; exit 0' HUP INT TERM
command -v fio > /dev/null || { echo "ERROR fio is not installed"; stopping; exit 1; }
case "$sock" in *,*) echo "ERROR fio cannot take a socket path with a comma ($sock); set XDG_CACHE_HOME there"
    stopping; exit 1 ;; esac
if [ ${#sock} -gt 107 ]; then
    echo "ERROR the socket path $sock is longer than a unix socket's 107 bytes; set XDG_CACHE_HOME shorter there"
    stopping; exit 1
fi
# fio's server on a unix socket of this run's own directory: no TCP port, and no other run's
# server can be mistaken for it (listening: flag 00010000 in /proc/net/unix, our path)
MOUNTBENCH_REMOTE_RUN=$token fio --server=sock:$sock > fio-server.log 2>&1 < /dev/null &
pid=$!
i=0; ready=""
while [ $i -lt 200 ] && kill -0 $pid 2>/dev/null; do
    if awk -v p="$sock" '$4 == "00010000" && $NF == p { f = 1 } END { exit !f }' /proc/net/unix; then ready=1; break; fi
    sleep 0.05; i=$((i+1))
done
if [ -z "$ready" ]; then echo "ERROR fio --server did not listen: $(tail -n 1 fio-server.log)"; stopping; exit 1; fi
# the controller writes a line every HEARTBEAT_S; none for CHECK_S: it is gone even if this
# session lives on (its network went and sshd has not noticed): stop as if the session had ended
( while :; do
    i=0; while [ $i -lt $2 ]; do sleep 1; i=$((i+1)); done
    if [ ! heartbeat -nt checked ]; then kill -TERM $$; exit 0; fi
    touch checked
  done ) &
echo "READY $pid $dir"
while read -r line; do touch heartbeat; done
stopping
echo STOPPED
"""
)

FACTS_SCRIPT = r"""
echo "hostname=$(cat /proc/sys/kernel/hostname 2>/dev/null || hostname)"
echo "kernel=$(uname -r)"
echo "arch=$(uname -m)"
echo "os=$(uname -s)"
echo "cpu_model=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
echo "cpu_count=$(grep -c '^processor' /proc/cpuinfo 2>/dev/null)"
echo "ram_kib=$(grep -m1 MemTotal /proc/meminfo 2>/dev/null | tr -s ' ' | cut -d' ' -f2)"
echo "machine_id=$(cat /etc/machine-id 2>/dev/null || cat /var/lib/dbus/machine-id 2>/dev/null)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
if command -v fio > /dev/null; then echo "fio_version=$(fio --version 2>&1 | head -n 1)"; else echo "fio_version="; fi
for p in "$@"; do
    if [ -e "$p" ]; then
        m=$(findmnt -n -o FSTYPE,SOURCE,TARGET -T "$p" 2>/dev/null | head -n 1 | tr -s ' ')
        [ -z "$m" ] && m="$(stat -f -c %T "$p" 2>/dev/null) ? ?"
        echo "path=$p|$m"
    else
        echo "path=$p|missing"
    fi
done
"""

# $1: fio server's pid, $2: token: is it still ours and running?
ALIVE_SCRIPT = 'grep -qsxzF "MOUNTBENCH_REMOTE_RUN=$2" /proc/$1/environ'
CLOCK_SCRIPT = "while read -r _; do date +%s%N; done"
CLOCK_ROUNDS = 9


def parse_facts(text: str) -> dict[str, Any]:
    """The facts script's ``key=value`` lines as host facts (the names content.HOST_FACTS uses)."""
    facts: dict[str, Any] = {}
    paths: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        if key == "path":
            path, _, mount = value.partition("|")
            if mount == "missing":
                paths[path] = {"fstype": UNKNOWN, "error": "no such file or directory"}
                continue
            fstype, source, target = ([*mount.split(" "), UNKNOWN, UNKNOWN, UNKNOWN])[:3]
            paths[path] = {"fstype": fstype or UNKNOWN, "mount_source": source, "mount_point": target}
        elif key == "cpu_count":
            facts[key] = int(value) if value.isdigit() else UNKNOWN
        elif key == "ram_kib":
            if value.isdigit():
                facts["ram_bytes"] = int(value) * 1024
        else:
            facts[key] = value.strip() or UNKNOWN if key != "fio_version" else value.strip()
    facts["paths"] = paths
    return facts
