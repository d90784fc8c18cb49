"""The plumbing every layer shares, importing nothing else of the package: atomic files and locks
(`files`), input checks (`inputs`), the shipped files (`resources`), option declarations
(`options`), the progress line (`progress`), JSON reports (`reports`), the quiet start-up
(`quiet`, `namespace_check`), package-wide imports (`package_modules`, `lazy_exports`), what every
command shares (`cli`: flag parsing, error lines, interruption), the strategy and precision flags
(`distribute`, `precision`) and cosine similarity (`similarity`)."""
