"""`mountbench containers`: the same workloads from inside a Podman container, on each way a
container gets storage (a bind mount, a named volume, its own writable layer, a tmpfs, an
overlay mount ``:O``), with the host's own view of the bind mount's directory as the baseline.

The lab owns everything it makes: a work directory of its own (workdir.py) holding Podman's
configuration, storage and run state for this run only, so the user's containers, images and
volumes are never listed or touched; an image built there from the host's own fio, the tools
the tree workloads run and what they link (image.py); one container with every mount
(lab.py; mounts/: one module per mount type + the registry MOUNT_TYPES). The container runs
the host's own mountbench, its Python read-only, as the QEMU lab's guest does; rounds
alternate between the host and the container (run.py), and the probe (probe.py, inprobe.py)
asks each mount what it supports from inside. member.py is the lab's member of the frame
(labs/frame.py). A killed run's leftovers are swept by the next run (workdir.py).

Imports as labs/ may (labs/__init__.py); nothing of labs/qemu or labs/cloud.
"""
