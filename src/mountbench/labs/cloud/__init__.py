"""`mountbench cloudlab`: FUSE cloud-drive mounts on this machine, no VM and no account.

rclone serves a directory (remote.py), toxiproxy puts a chosen round-trip time and
bandwidth between it and the mounts, its memory guarded (delay.py), all inside a network
namespace of the lab's own (netns.py), and one ``rclone mount`` per VFS cache mode
(mounts/: one module per cache mode + the registry CACHE_MODES) and RTT is a target, with
the local disk as the baseline (matrix.py, lab.py; each mount's remote control: rc.py;
whether the remote holds all a mount shows: uploaded.py).
Each target is probed first in a worker process of its own (mountprobes.py, worker.py:
capabilities, and durability/coherence with the remote, probe/remotesync.py), then a
tree's upload lag is measured on every mount (treelag.py), then the workloads run through
the engine's session, each sample from the remote (phases.py: uploads done; reads cold,
and warm), with rclone's own cost per sample (watch.py) and each cache mode's caveats
(caveats.py); run.py ties it together, plan.py is --dry-run, and member.py is the lab's
member of the frame (labs/frame.py). Whatever the lab starts stops with the run; a killed
run's leftovers are cleaned by the next (state.py).

Imports as labs/ may (labs/__init__.py); nothing of labs/qemu.
"""
