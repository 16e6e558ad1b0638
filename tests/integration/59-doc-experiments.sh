#!/usr/bin/env bash
# docs/experiments.md's shell examples run as written (27-doc-examples' rules;
# a script of its own: its timed runs take as long as all the other docs').
DOC_ONLY=docs/experiments.md exec bash "$(dirname "$0")/27-doc-examples.sh"
