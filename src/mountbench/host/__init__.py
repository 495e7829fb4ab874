"""This machine and its targets: what the tool reads about the host and touches on it.

- ``targets``: mountinfo and a target's facts (filesystem, device, mount options, space);
- ``scratch``: the marked, locked scratch directories runs and probes work in (the only
  place mountbench writes in a target, and the only things it deletes);
- ``odirect``: the one O_DIRECT probe; ``devstats``: a block device's I/O counters;
- ``outputs``: every file mountbench writes for the user (never over a device, a directory,
  the results database or an input); ``inputs``: reading the user's files with bounds;
- ``facts``: host facts (kernel, CPU, RAM, versions) recorded with every run;
- ``contain``: every child that touches a target born inside a fence (Landlock, or a private
  mount namespace): it can write only beneath the directories it is given;
- ``process``: child processes timed by their rusage, and servers that die with us;
- ``procfs`` and ``watch``: host processes' CPU, memory and context switches around a
  sample (--watch); ``cost``: the lab's serving processes measured the same way.

May import: model, errors, units. Imported by engine/, kinds/, probe/, clients/, labs/, cli/.
"""
