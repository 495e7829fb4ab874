"""Reports: pure functions from stored runs to text, HTML, CSV/JSON and charts. Nothing here
writes a file: charts come back as bytes (charts.chart_files) and the CLI writes them.

What every format says, worked out once (content.build_report makes a model.Report):
- ``model``: the Report record (columns, metric groups, percentile curves, sweeps, notes);
- ``labels``: one column per target, named with its host when the runs come from several;
- ``notes``: warnings and the caveats numbered once, in reading order;
- ``grid``: the summary grid every format leads with; ``phrasing`` and ``verdicts``: how a
  comparison is said; ``cells``: one cell's text and its footnotes;
- ``percentile_curves`` (study S4) and ``sweep_discovery`` (study S3, the statistics of a
  sweep are analysis/sweeps.py's);
- ``rounds``: rounds per cell of adaptive runs; ``methodology``: how the numbers were made;
- ``picktwo/``: pick two, measured, on the verdict scale both labs share.

How each format lays it out:
- every table is a TableView (blocks/, below probe/: the probe's tables too), laid out by
  blocks.to_markdown, blocks.to_html and blocks.to_terminal; ``views``: the report's own tables;
- ``terminal``, ``terminal_tables``, ``terminal_layout``: the terminal report;
- ``markdown``, ``html`` (with templates/): the documents; ``csvexport`` and ``document``:
  CSV and the JSON export document;
- ``charts`` (the plan of every chart), ``bar_charts``, ``ratio_chart``; ``chartkit``: the
  public kit every chart draws with; ``chartkeys``: a chart without drawing it;
- ``sections/``: the optional sections, one module (or package) each, in a registry the
  renderers iterate;
- ``gate`` (`run --against`'s tables, Markdown summary and JUnit XML), ``history`` and
  ``history_chart`` (`mountbench history`'s tables, page and chart).

May import: the ground floor (a run's lab facts, the package's __version__), analysis/, blocks/,
records/ and probe/.
analysis/ computes every statistic, never this package; records/ gives the readers' types
and the export format's constants; probe/ gives pick two its results. Never engine/, cli/,
host/, fio/, clients/, kinds/ or the labs: the report reads what was stored, not how it was run.
"""
