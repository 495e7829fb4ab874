"""The labs: storage that mountbench builds itself, measures, and takes down again.

One frame (frame.py: what a lab member supplies, and the pieces they share; leftovers.py: the one
sweep of the work directories a killed run left) and its members,
one subpackage each: qemu/ (`mountbench lab`: mounts into a throwaway QEMU guest), cloud/
(`mountbench cloudlab`: rclone mounts of a remote served on this machine), containers/
(`mountbench containers`: a Podman container's mounts, measured from inside); members.py
lists them. A lab joins with a subpackage of its own, its member object (labs/<name>/member.py),
one line in members.LABS, and its facts record in labfacts.py (one line in labfacts.LAB_FACTS).

May import: the ground floor, host/, probe/, records/, engine/, kinds/, fio/, store/.
Imported by cli/ only.
"""
