"""The demo: `python -m tfdialemb.demo` (`__main__`, what `bash run_demo.sh` runs) and the generated
corpus it trains on (`corpus`, its wording in `templates.json`; written to a file by
`python -m data_prep.make_demo_corpus`)."""
