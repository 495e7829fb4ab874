"""The blocks every output is made of, laid out once per medium: a table (TableView, built once
with its display strings, notes and styles) as Markdown, as the page's HTML and on the terminal.
Below probe/, so that the probe, `doctor`, `presets` and every report lay out their tables alike.

- ``table``: TableView, CellView, Line, Mark, and a cell's notes (note_links, noted);
- ``to_markdown``: Markdown's escaping (md_text, md_code, md_marks) and a TableView as a GFM table;
- ``to_html``: a TableView as the page's sortable table (templates/blocks.html.j2), and the Jinja
  environment every page is made with;
- ``to_terminal``: a TableView as a rich table (RichLayout: how the terminal lays it out);
- ``tokens``: what a line may never break (a number and its unit, an option and its value).

May import: the ground floor (model, labfacts, errors, units; nothing else).
"""
