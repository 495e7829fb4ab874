"""Many clients at once: shared storage loaded from several machines through fio's own
client/server engine (``fio --server`` on each client, one ``fio --client=…`` from the
controller per sample).

- ``spec``: client addresses (``HOST[:PORT]``) and the client counts of a scaling run.
- ``results``: fio's client JSON split per client; mountbench's own aggregate (pure).
- ``fioprobe``: what a client's fio says about itself, and tiny real fio jobs run on it.
- ``preflight``: every client checked before anything runs.
- ``invocation``: one watched ``fio --client`` process (time limit, lost clients, Ctrl-C).
- ``agent``: the side channel `mountbench serve` adds next to its fio server (host facts,
  coherence steps); plain ``fio --server`` clients have none.
- ``serve``: `mountbench serve`.
- ``remoteprobe`` (controller) and ``probeagent`` (agent): ``probe --view PATH@A=PATH@B``.

The workload kind that runs samples this way is kinds/fioclients.py; its report section is
report/clients.py.
"""
