"""The command line, the top floor: one module per command (run, show, list, presets,
probe, serve, lab, doctor, report, history, transfer for export/import; against.py is run's
--against), main.py (the group, and
the one place that turns errors into exit codes), options.py (options shared by several
commands, each declared once; the run options come from model.RunOptions, their flags and
help from runflags.py), console.py
(the two consoles and what commands print alike) and progress.py (the progress bar).

formats/ holds the report's formats, one module each (a plug-in; formats.FORMATS lists them).

May import: the ground floor, analysis/, blocks/, clients/, engine/, fio/, host/, kinds/, labs/,
presets/, probe/, records/, report/ and store/ (everything below it). Nothing imports cli/.
"""
