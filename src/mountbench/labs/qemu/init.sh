#!/bin/sh
# mountbench lab guest init (POSIX sh: runs under busybox ash and the host's dash).
#
# Stage 1 is /init in the initramfs (busybox): load modules, mount the host's root
# read-only (9p or virtiofs) under a tmpfs overlay so the guest can write without
# touching the host, mount the lab's control and results shares, bring up the
# network when asked, then chroot into that root and run stage 2 with the host's
# own shell and tools.
#
# Stage 2 mounts every filesystem under test (the host writes the commands to
# /run/mbctl/mounts.sh: the helpers below, plus any shell functions a mount type
# defines there itself), reports each mount's /proc/mounts line, then runs the
# commands the host sends over the second serial port (ttyS1), one at a time,
# with their output on the console (ttyS0) between marker lines:
#   MB-LAB start ID / ... output ... / MB-LAB done ID RC
# and leaves the loop on "exit"; stage 1 then powers the guest off.

say() { echo "MB-LAB $*"; }

uptime_s() { read -r up _ < /proc/uptime; echo "$up"; }

fail() {
    say fatal "$*"
    sync
    poweroff -f
    sleep 60
}

stage1() {
    export PATH=/bin
    mount -t proc proc /proc
    mount -t sysfs sysfs /sys
    mount -t devtmpfs devtmpfs /dev
    root=9p
    probe=0
    net=0
    for arg in $(cat /proc/cmdline); do
        case $arg in
            mb.root=*) root=${arg#mb.root=} ;;
            mb.probe=1) probe=1 ;;
            mb.net=1) net=1 ;;
        esac
    done
    say init "$(uptime_s)"
    if [ "$probe" = 1 ]; then
        say probe-ok
        poweroff -f
        sleep 60
    fi
    while read -r mod; do
        insmod "/lib/mb/$mod.ko" || say warn "insmod $mod failed"
    done < /lib/mb/order
    mkdir -p /lower /upper /newroot
    if [ "$root" = virtiofs ]; then
        mount -t virtiofs -o ro mbroot /lower || fail "cannot mount the host root over virtiofs"
    else
        mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro mbroot /lower \
            || fail "cannot mount the host root over 9p"
    fi
    # The overlay's upper layer is guest RAM: the guest can create /results and
    # /mnt/<slug>, while the host's root stays read-only below it.
    mount -t tmpfs -o mode=0755 mbupper /upper
    mkdir -p /upper/data /upper/work
    mount -t overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work mbroot /newroot \
        || fail "cannot mount the overlay over the host root (module overlay missing?)"
    mount -t proc proc /newroot/proc
    mount -t sysfs sysfs /newroot/sys
    mount -t devtmpfs devtmpfs /newroot/dev
    mkdir -p /newroot/dev/pts /newroot/dev/shm
    mount -t devpts devpts /newroot/dev/pts
    mount -t tmpfs -o mode=1777 tmpfs /newroot/dev/shm
    # /tmp stays the overlay (writable, in guest RAM) so that the host's /tmp shows
    # through: mountbench itself may live there (a CI checkout, a venv under /tmp).
    mount -t tmpfs -o mode=0755 tmpfs /newroot/run
    mount -t tmpfs -o mode=0755 tmpfs /newroot/mnt
    mkdir -p /newroot/run/mbctl /newroot/run/mb /newroot/results
    mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,ro mbctl /newroot/run/mbctl \
        || fail "cannot mount the lab control share"
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none mbres /newroot/results \
        || fail "cannot mount the results share"
    # loopback always: workloads such as http serve on 127.0.0.1 inside the guest
    ip link set lo up
    if [ "$net" = 1 ]; then
        ip link set eth0 up || fail "no eth0 (virtio_net missing?)"
        ip addr add 10.0.2.15/24 dev eth0
        ip route add default via 10.0.2.2
    fi
    say root-ready "$(uptime_s)" "$root"
    # Keep kernel chatter off the console from now on: it carries command output.
    echo "1 4 1 7" > /proc/sys/kernel/printk
    chroot /newroot /bin/sh /run/mbctl/init.sh stage2
    say stage2-exit "$?"
    sync
    poweroff -f
    sleep 60
}

# --- stage 2 helpers, called from the host-written /run/mbctl/mounts.sh ---
# A mount line ends with mb_record SLUG (mounted) or mb_failed SLUG MESSAGE.

mb_record() {  # SLUG: report the /proc/mounts line of /mnt/SLUG
    line=$(awk -v m="/mnt/$1" '$2 == m { l = $0 } END { print l }' /proc/mounts)
    say mounted "$1" "$line"
}

mb_failed() {  # SLUG MESSAGE
    say mount-failed "$1" "$(echo "$2" | tr '\n' ' ')"
}

mb_mount() {  # SLUG FSTYPE SOURCE OPTIONS
    mkdir -p "/mnt/$1"
    if out=$(mount -t "$2" -o "$4" "$3" "/mnt/$1" 2>&1); then
        mb_record "$1"
    else
        mb_failed "$1" "mount -t $2 $3: $out"
    fi
}

mb_run() {  # ID: run /run/mbctl/cmd-ID.sh, output not on a tty, status in a marker
    say start "$1"
    # The pipe through cat keeps the command's stdout off the tty (no progress
    # bars, no colours); the status comes back through a file.
    { (cd / && sh "/run/mbctl/cmd-$1.sh") < /dev/null 2>&1; echo "$?" > "/run/mb/rc-$1"; } | cat
    rc=$(cat "/run/mb/rc-$1" 2> /dev/null || echo 255)
    say done "$1" "$rc"
}

stage2() {
    export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    export HOME=/root LANG=C.UTF-8 TERM=dumb MB_LAB=1 MB_LAB_RESULTS=/results
    cd /
    # shellcheck disable=SC1091
    . /run/mbctl/mounts.sh
    exec 3< /dev/ttyS1
    stty raw -echo < /dev/ttyS1
    say ready "$(uptime_s)"
    while IFS= read -r line <&3; do
        set -- $line
        case ${1:-} in
            run) mb_run "$2" ;;
            exit) break ;;
            *) ;;
        esac
    done
    for m in $(awk '$3 ~ /^fuse/ && $2 ~ /^\/mnt\// { print $2 }' /proc/mounts); do
        umount "$m" 2> /dev/null
    done
    sync
    say bye
}

case ${1:-} in
    stage2) stage2 ;;
    *) stage1 ;;
esac
