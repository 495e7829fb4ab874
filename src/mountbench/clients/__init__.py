"""Many clients at once: shared storage loaded from several machines through fio's own
client/server engine (``fio --server`` on each client, one ``fio --client=…`` from the
controller per sample), and the probe's coherence checks between two of them.

- ``spec``: client addresses (``HOST[:PORT]``, ``ssh://[USER@]HOST[:PORT]``, --hosts-file)
  and the client counts of a scaling run.
- ``results``: fio's client JSON split per client; mountbench's own aggregate; each
  client's start skew and the overlap check (pure).
- ``sshconn``: one ControlMaster ssh connection per ``ssh://`` client (the user's own ssh).
- ``sshscripts``: the shell scripts run on ``ssh://`` clients, as text (and their facts read).
- ``sshremote``: what mountbench starts on ``ssh://`` clients (fio's server under a run
  marker, tunnelled; host facts; the clock offset; the start barrier) and stops again.
- ``fioprobe``: what a client's fio says about itself, and tiny real fio jobs run on it.
- ``preflight``: every client checked before anything runs.
- ``invocation``: one watched ``fio --client`` process (time limit, lost clients, Ctrl-C).
- ``agent``: the side channel `mountbench serve` adds next to its fio server (host facts;
  a ``probe`` session carrying probe/agent.py's protocol); plain ``fio --server`` clients
  have none.
- ``serve``: `mountbench serve`.
- ``remoteprobe``: ``probe --view PATH@A=PATH@B``: probe/coherence.py's checks driven on
  two clients through their serve, as the lab drives its guest.

May import: the ground floor (model, labfacts, errors, units), analysis/ (the skew and overlap of
samples), host/, fio/, probe/. Imported by
kinds/fioclients.py (the workload kind that runs samples this way), engine/, report/clients.py
and the CLI.
"""
