#!/usr/bin/env bash
# Install what mountbench needs on Debian/Ubuntu, then the Python package into .venv.
#   scripts/install.sh          runtime: fio and the package
#   scripts/install.sh --test   also what the test suite uses (real mounts, the QEMU lab, a browser)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(fio python3-venv git tar xz-utils zstd rsync)
if [[ "${1:-}" == "--test" ]]; then
    packages+=(sshfs openssh-server bindfs fusefat dosfstools e2fsprogs util-linux psmisc
               qemu-system-x86 qemu-utils busybox-static kmod linux-image-amd64 nfs-ganesha nfs-ganesha-vfs
               chromium hyperfine)
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
    "${sudo_cmd[@]}" apt-get update -qq
    available=()
    for p in "${missing[@]}"; do
        if apt-cache show "$p" >/dev/null 2>&1; then available+=("$p"); else echo "note: no package $p here; skipping it"; fi
    done
    missing=("${available[@]}")
fi
if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
    "$python" -m venv .venv
fi
.venv/bin/pip install -q --upgrade pip
if [[ "${1:-}" == "--test" ]]; then
    .venv/bin/pip install -q -e '.[test]'
else
    .venv/bin/pip install -q -e .
fi
