"""The labs: storage that mountbench builds itself and then measures.

Members: qemu/ (`mountbench lab`: mounts into a throwaway QEMU guest), cloud/ (`mountbench
cloudlab`: rclone mounts of a remote served on this machine).
"""
