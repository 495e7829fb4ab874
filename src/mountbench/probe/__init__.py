"""mountbench probe: what a mount really supports, and how coherent two views of it are.

- :func:`probe_target` tries every capability for real in a scratch directory.
- :func:`measure_coherence` measures how changes through one view show through another.
- ``render_*`` turn the results into rich renderables, Markdown or HTML; the
  ``render_document_*`` functions and :func:`document_json` render a whole probe
  (:class:`ProbeReport`), findings that lose or corrupt data first.

Modules: ``model`` (records), ``plain`` (every record's to_dict/from_dict, read off its
fields), ``capabilities`` (one function per capability, and the frame they share),
``conformance`` (what developers' tools rely on: other users, ctime, one timestamp alone, error
codes, deep paths), ``catalogue`` (every capability, in order; the ones that may crash a mount
last), ``tools`` (whether make, git, rsync -a and an editor's save-by-rename work there, read
from the verdicts), ``sandbox`` (child processes with a timeout), ``target`` (probe_target, and
the probe's scratch directory through :mod:`mountbench.host.scratch`), ``coherence`` (the
checks, written once as named steps, and their driver measure_views), ``sides`` (where a
view's steps run: here, or through ``agent`` on another machine: the lab's guest or a
client's `mountbench serve`), ``measure`` (one probe command), ``render``, ``fsinfo``,
``inotify`` (a ctypes inotify watcher).

May import: the ground floor (model, labfacts, errors, units), blocks/ (its tables) and host/. Imported by clients/
(coherence across clients), labs/ (the QEMU guest's probe, the cloud lab's), report/ and the CLI.
"""

from mountbench.probe.capabilities import Capability
from mountbench.probe.catalogue import CAPABILITIES, CAPABILITY_IDS
from mountbench.probe.coherence import measure_coherence
from mountbench.probe.render import (
    data_loss,
    document_json,
    render_coherence_html_fragment,
    render_coherence_markdown,
    render_coherence_terminal,
    render_document_html,
    render_document_markdown,
    render_document_terminal,
    render_html_fragment,
    render_markdown,
    render_terminal,
)
from mountbench.probe.sandbox import ChildCrashed
from mountbench.probe.target import probe_target, remove_scratch
from mountbench.probefacts import (
    VERDICTS,
    CoherenceResult,
    FsInfo,
    InotifyResult,
    LockResult,
    ProbeReport,
    ProbeResult,
    StaleReadResult,
    TargetProbe,
    VisibilityResult,
)

__all__ = [
    "CAPABILITIES",
    "CAPABILITY_IDS",
    "VERDICTS",
    "Capability",
    "ChildCrashed",
    "CoherenceResult",
    "FsInfo",
    "InotifyResult",
    "LockResult",
    "ProbeReport",
    "ProbeResult",
    "StaleReadResult",
    "TargetProbe",
    "VisibilityResult",
    "data_loss",
    "document_json",
    "measure_coherence",
    "probe_target",
    "remove_scratch",
    "render_coherence_html_fragment",
    "render_coherence_markdown",
    "render_coherence_terminal",
    "render_document_html",
    "render_document_markdown",
    "render_document_terminal",
    "render_html_fragment",
    "render_markdown",
    "render_terminal",
]
