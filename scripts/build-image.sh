#!/usr/bin/env bash
# Build mountbench's container image (the Containerfile) with Podman, with or without a registry.
#
#   scripts/build-image.sh [--tag NAME] [--base IMAGE] [--state DIR] [--save FILE] [--fresh-base] [--no-registry]
#   scripts/build-image.sh --remove [--state DIR]    # every image, container and volume in DIR, then DIR
#
# 1. The wheel of this checkout (pip wheel, from a copy of its sources: nothing is written in the
#    checkout) and a wheelhouse of its dependencies for the image's Python 3.11 (pip download), in
#    a build context of its own: the image build needs no PyPI.
# 2. The base: --base IMAGE when given; else docker.io/library/debian:bookworm-slim when a
#    registry answers (60 s at most); else Debian bookworm made here from Debian's packages with
#    mmdebstrap (installed with apt when missing; minbase, without docs, man pages and locales as
#    the slim image) and imported with `podman import` as localhost/mountbench-base:bookworm.
#    A base already in the state directory is used again (--fresh-base makes it anew).
# 3. podman build --build-arg BASE=<the base> -f Containerfile, tagged NAME (default
#    localhost/mountbench:latest); apt runs in the build, over the host's network.
#
# Podman runs with runc, the cgroupfs cgroup manager and no default ulimits (crun and systemd
# cgroups fail on hosts like this one), its storage, volumes and run state all in DIR (default
# ~/.cache/mountbench/image; MOUNTBENCH_IMAGE_STATE), with the container lab's own settings
# (src/mountbench/labs/containers/workdir.py): the machine's own Podman storage is never used.
# At the end it prints how to run the image with those settings; --save FILE also writes the
# image as an archive that `docker load -i FILE` or `podman load -i FILE` takes.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

tag=localhost/mountbench:latest
base=""
state="${MOUNTBENCH_IMAGE_STATE:-${XDG_CACHE_HOME:-$HOME/.cache}/mountbench/image}"
save=""
fresh_base=0
registry=1
remove=0
while (($#)); do
    case "$1" in
        --tag) tag="$2"; shift 2 ;;
        --base) base="$2"; shift 2 ;;
        --state) state="$2"; shift 2 ;;
        --save) save="$2"; shift 2 ;;
        --fresh-base) fresh_base=1; shift ;;
        --no-registry) registry=0; shift ;;
        --remove) remove=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-image.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

if ((remove)); then
    [[ -d "$state" ]] || exit 0
    state="$(cd "$state" && pwd)"
    if ! grep -q "written by mountbench containers" "$state/containers.conf" 2>/dev/null; then
        echo "build-image.sh: $state holds no Podman settings of this script; not removing it" >&2; exit 2
    fi
    export CONTAINERS_CONF="$state/containers.conf" CONTAINERS_STORAGE_CONF="$state/storage.conf"
    podman --runtime runc rm --all --force --time 0 >/dev/null 2>&1 || true
    podman --runtime runc volume rm --all --force >/dev/null 2>&1 || true
    podman --runtime runc rmi --all --force >/dev/null 2>&1 || true
    # what Podman's storage left mounted under the directory (its overlay home), deepest first
    awk -v dir="$state" '$5 == dir || index($5, dir "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r |
        while read -r point; do umount "$point" 2>/dev/null || umount -l "$point"; done
    rm -rf "$state"
    echo "removed $state"
    exit 0
fi

python=${PYTHON:-}
if [[ -z "$python" ]]; then
    if [[ -x "$repo/.venv/bin/python" ]]; then python="$repo/.venv/bin/python"; else python=python3; fi
fi
command -v podman >/dev/null || { echo "build-image.sh: podman is missing; apt-get install podman runc" >&2; exit 2; }
command -v runc >/dev/null || { echo "build-image.sh: runc is missing; apt-get install runc" >&2; exit 2; }

mkdir -p "$state"/{storage,run,tmp}
chmod 700 "$state"
state="$(cd "$state" && pwd)"
# the container lab's Podman settings, written for this directory
if ! PYTHONPATH="$repo/src" "$python" - "$state" <<'EOF'
import sys
from pathlib import Path

from mountbench.labs.containers.workdir import containers_conf, storage_conf

state = Path(sys.argv[1])
(state / "containers.conf").write_text(containers_conf(state))
(state / "storage.conf").write_text(storage_conf(state))
EOF
then
    echo "build-image.sh: $python cannot import mountbench's dependencies; run scripts/install.sh first (or set PYTHON)" >&2
    exit 2
fi
export CONTAINERS_CONF="$state/containers.conf" CONTAINERS_STORAGE_CONF="$state/storage.conf"
pm() { podman --runtime runc "$@"; }

work="$(mktemp -d "$state/tmp/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# 1. the wheel and its dependencies
start=$SECONDS
mkdir -p "$work/source" "$work/context/dist/wheels"
tar -C "$repo" --exclude=__pycache__ --exclude='*.egg-info' -cf - pyproject.toml README.md src | tar -C "$work/source" -xf -
"$python" -m pip wheel --no-deps --disable-pip-version-check -q -w "$work/context/dist" "$work/source" >/dev/null
wheel=$(ls "$work"/context/dist/mountbench-*.whl)
arch=$(uname -m)
platforms=(--platform "manylinux1_$arch" --platform "manylinux2010_$arch" --platform "manylinux2014_$arch")
for minor in $(seq 5 36); do platforms+=(--platform "manylinux_2_${minor}_$arch"); done  # bookworm's glibc is 2.36
"$python" -m pip download --disable-pip-version-check -q --dest "$work/context/dist/wheels" --only-binary=:all: \
    --python-version 3.11 --implementation cp --abi cp311 "${platforms[@]}" "$wheel" >/dev/null
rm -f "$work"/context/dist/wheels/mountbench-*.whl
echo "wheel: $(basename "$wheel") and $(ls "$work/context/dist/wheels" | wc -l) wheels of its dependencies ($((SECONDS - start)) s)"

# 2. the base
local_base=localhost/mountbench-base:bookworm
registry_base=docker.io/library/debian:bookworm-slim
if [[ -n "$base" ]]; then
    echo "base: $base (--base)"
elif ((!fresh_base)) && pm image exists "$registry_base"; then
    base=$registry_base; echo "base: $base, already in $state"
elif ((!fresh_base)) && pm image exists "$local_base"; then
    base=$local_base; echo "base: $base, made earlier with mmdebstrap, already in $state"
elif ((registry)) && timeout 60 podman --runtime runc pull --quiet "$registry_base" >/dev/null 2>"$work/pull.log"; then
    base=$registry_base; echo "base: $base, pulled"
else
    if ((registry)); then echo "base: no registry answered ($(tail -n 1 "$work/pull.log" 2>/dev/null || echo timeout)); making Debian bookworm with mmdebstrap"; fi
    if ! command -v mmdebstrap >/dev/null; then
        sudo_cmd=(); if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
        echo "installing mmdebstrap with apt"
        "${sudo_cmd[@]}" apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
    fi
    start=$SECONDS
    mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
    security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
    if ! mmdebstrap --variant=minbase --format=tar \
            --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
            --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
            bookworm "$work/base.tar" "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
            "deb $security bookworm-security main" >"$work/mmdebstrap.log" 2>&1; then
        tail -n 20 "$work/mmdebstrap.log" >&2; exit 1
    fi
    pm import --quiet --change 'CMD ["/bin/bash"]' "$work/base.tar" "$local_base" >/dev/null
    rm -f "$work/base.tar"
    base=$local_base
    echo "base: $base, made with mmdebstrap from $mirror and imported ($((SECONDS - start)) s)"
fi

# 3. the image
start=$SECONDS
if ! pm build --network host --build-arg "BASE=$base" -t "$tag" -f "$repo/Containerfile" "$work/context" \
        >"$work/build.log" 2>&1; then
    tail -n 30 "$work/build.log" >&2; exit 1
fi
pm image prune --force >/dev/null  # the install stage's image (the wheelhouse is in it): this directory's own
versions=$(pm run --rm --entrypoint sh "$tag" -c 'echo "$(mountbench --version), $(fio --version), $(python3 --version)"')
echo "image: $tag $(pm image inspect --format '{{.Id}}' "$tag" | cut -c1-12): $versions ($((SECONDS - start)) s)"
if [[ -n "$save" ]]; then
    rm -f "$save"
    pm save --quiet --format docker-archive -o "$save" "$tag"
    echo "saved: $save (docker load -i $save, or podman load -i $save)"
fi
cat <<EOF
run it (Podman's state in $state):
  export CONTAINERS_CONF=$CONTAINERS_CONF CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF
  mkdir -p results
  podman --runtime runc run --rm -v "\$PWD":/host -v mbvol:/vol -v "\$PWD/results":/results $tag run /host /vol /tmp
EOF
