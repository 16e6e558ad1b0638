#!/usr/bin/env bash
# docs/experiments.md's shell examples run as written (27-doc-examples' rules;
# a script of its own, in make check-long: its timed runs take as long as all
# the other docs' together).
DOC_ONLY=docs/experiments.md exec bash "$(dirname "$0")/27-doc-examples.sh"
