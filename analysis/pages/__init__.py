"""How results look: the one HTML page shell every page shares (shell.py: style, tables, figures,
writing and serving a page), the board page of one game (board*.py and its template), and the
cells of the terminal tables. A study's own page lives with the study (analysis/studies/)."""
