""" "Pick two", measured, for every lab: three properties per mount, each judged on one scale.

- ``scale``: the verdict scale both labs share (good, fair, poor, data loss, not shared,
  not measured), its marks and colours, a factor from the fastest mount judged, the worst of
  several verdicts, and a verdict as a table cell (views.TableView) every format lays out;
- ``probed``: what the QEMU lab's pick two holds (Measured, PickTwoRow, PickTwo) and its
  coherence and concurrency verdicts, read from `lab --probe`'s results;
- ``lab``: the QEMU lab's pick two from a report (performance from the benchmark's sweeps
  and tree workload; content.build_report stores it on the Report once);
- ``chart``: the pick-two chart (mounts down, properties across, coloured by verdict).

The cloud lab's measures (performance, consistency with the remote, durability at fsync)
are in sections/cloudpick.py, on the same scale. Each section (sections/picktwo.py,
sections/cloudpick.py) lays out its table through the shared table builder (blocks/table.py).

Of report/'s sub-packages it may import: none.
Beside that: the ground floor, analysis/, probe/ (the results it judges), and report modules
below the sections (model, labels, tables, chartkit inside the chart function).
"""
