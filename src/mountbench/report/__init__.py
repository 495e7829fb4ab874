"""Reports: pure functions from stored runs to text, HTML, CSV/JSON and charts.

content.py works out once what every format says (columns, summary, notes, sweeps);
terminal.py, markdown.py, html.py, csvexport.py and charts.py lay it out; views.py and
tables.py build the tables every document format shares; chartkit.py is the public kit
every chart draws with; sections/ holds the optional sections, one module each, in a
registry the renderers iterate.

May import: the ground floor (model, units, errors), analysis/ (statistics are computed
there, never here), records/ readers' types, probe/ (pick two shows its results). Never
engine/ or cli/: the report reads what was stored, not how it was run.
"""
