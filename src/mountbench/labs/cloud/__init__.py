"""`mountbench cloudlab`: FUSE cloud-drive mounts on this machine, no VM and no account.

rclone serves a directory on loopback (remote.py), toxiproxy puts a chosen round-trip
time and bandwidth between it and the mounts (delay.py), and one ``rclone mount`` per
VFS cache mode (mounts/: one module per cache mode + the registry CACHE_MODES) and RTT is
a target, with the local disk as the baseline (spec.py, lab.py). Each target is probed
first in a worker process of its own (probe.py, worker.py: capabilities, and
durability/coherence with the remote, probe/remotesync.py), then the workloads run
through the engine's session with rclone's own cost per sample (watch.py) and each cache
mode's caveats (caveats.py); run.py ties it together, and member.py is the lab's member
of the frame (labs/frame.py). Whatever the lab starts stops with the run; a killed run's
leftovers are cleaned by the next (state.py).

Imports as labs/ may (labs/__init__.py); nothing of labs/qemu.
"""
