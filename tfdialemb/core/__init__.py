"""The plumbing every layer shares, importing nothing else of the package: atomic files and locks
(`files`), option declarations (`options`), the progress line (`progress`), JSON reports
(`reports`), the quiet start-up (`quiet`, `namespace_check`) and package-wide imports
(`package_modules`). The commands' own helpers are `tfdialemb.cli`."""
