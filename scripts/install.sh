#!/usr/bin/env bash
# Install what mountbench needs on Debian/Ubuntu, then the Python package into .venv.
#   scripts/install.sh          runtime: fio, nginx and wrk (http workloads, preset s1) and the package
#   scripts/install.sh --test   also what the test suite uses (real mounts, the QEMU lab, a browser)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(fio python3-venv git tar xz-utils zstd rsync nginx-light wrk)
if [[ "${1:-}" == "--test" ]]; then
    packages+=(sshfs openssh-server openssh-client iproute2 bindfs fusefat dosfstools e2fsprogs util-linux psmisc
               qemu-system-x86 qemu-utils busybox-static kmod linux-image-amd64 nfs-ganesha nfs-ganesha-vfs
               chromium poppler-utils hyperfine rclone fuse3 tmux podman runc fuse-overlayfs uidmap mmdebstrap)
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
    "${sudo_cmd[@]}" apt-get update -qq >/dev/null
    available=()
    for p in "${missing[@]}"; do
        if apt-cache show "$p" >/dev/null 2>&1; then available+=("$p"); else echo "note: no package $p here; skipping it"; fi
    done
    missing=("${available[@]}")
fi
if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    # mountbench starts its own nginx (127.0.0.1, a generated config) for each http sample: the
    # package's default site on port 80 is not started here, nor enabled at boot, when this
    # script is what installs it
    new_nginx=0
    if [[ " ${missing[*]} " == *" nginx-light "* ]] && ! command -v nginx >/dev/null && [[ ! -x /usr/sbin/nginx ]]; then
        new_nginx=1
    fi
    policy=/usr/sbin/policy-rc.d
    made_policy=0
    if ((new_nginx)) && [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
        "${sudo_cmd[@]}" chmod 755 "$policy"
        made_policy=1
    fi
    # apt and debconf write progress and "delaying package configuration" notes to stderr: keep them
    # in a log that is shown only when the install fails
    log=$(mktemp)
    if ! DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" >"$log" 2>&1; then
        cat "$log" >&2; rm -f "$log"
        if ((made_policy)); then "${sudo_cmd[@]}" rm -f "$policy"; fi
        exit 1
    fi
    rm -f "$log"
    if ((made_policy)); then "${sudo_cmd[@]}" rm -f "$policy"; fi
    if ((new_nginx)) && command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
        "${sudo_cmd[@]}" systemctl disable --now nginx >/dev/null 2>&1 || true
    fi
fi

python=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
    "$python" -m venv .venv
fi
# pip's build backend prints deprecation warnings of the build tools to stderr on every install;
# they are not about this machine: show pip's output only when it fails
pip_quiet() {
    local log
    log=$(mktemp)
    if ! .venv/bin/pip install -q --disable-pip-version-check "$@" >"$log" 2>&1; then
        cat "$log" >&2; rm -f "$log"; exit 1
    fi
    rm -f "$log"
}
pip_quiet --upgrade pip
if [[ "${1:-}" == "--test" ]]; then
    pip_quiet -e '.[test]'
else
    pip_quiet -e .
fi
# pip compiles what it installs, but not an editable package's sources: compile them here, so a
# process that cannot write bytecode (the lab's guest runs this checkout from a read-only root, under
# emulation; PYTHONDONTWRITEBYTECODE) does not compile every module of mountbench on each start
.venv/bin/python -m compileall -q src

# the cloud lab's delay on the wire (mountbench cloudlab): toxiproxy, built with Go into the
# virtualenv when it is missing (Debian has no package; ~20 s). Without Go the cloud-lab tests
# skip and say so ('mountbench doctor --cloud' gives the same fix).
if [[ "${1:-}" == "--test" && ! -x .venv/bin/toxiproxy-server ]] && ! command -v toxiproxy-server >/dev/null; then
    go_bin=$(command -v go || true)
    if [[ -z "$go_bin" && -x /usr/local/go/bin/go ]]; then go_bin=/usr/local/go/bin/go; fi
    if [[ -n "$go_bin" ]]; then
        echo "building toxiproxy-server (the cloud lab's delay proxy) with $go_bin"
        gobin=$(mktemp -d)
        log=$(mktemp)
        if GOBIN="$gobin" GOFLAGS=-mod=mod "$go_bin" install github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0 >"$log" 2>&1; then
            mv "$gobin/server" .venv/bin/toxiproxy-server
        else
            cat "$log" >&2; echo "note: toxiproxy did not build; the cloud-lab tests will skip" >&2
        fi
        rm -rf "$gobin" "$log"
    else
        echo "note: Go is not installed (/usr/local/go/bin/go or go on PATH): toxiproxy is not built and the cloud-lab tests skip"
    fi
fi
