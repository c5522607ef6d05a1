"""`python -m elicitkit` runs the command-line tool."""

from elicitkit._cli import main

raise SystemExit(main())
