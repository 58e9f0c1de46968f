"""The job: its file (config), and its join planned from its sources' schemas. No Spark state here."""
