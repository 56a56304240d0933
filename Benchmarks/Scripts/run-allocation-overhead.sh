#!/usr/bin/env bash
# What the allocation counter costs timed work (issue 16, item 5), measured in pairs: the
# allocation-overhead tool links the counter, switches its mode at run time and runs, in each
# round, one chunk of a few milliseconds of a work per mode (off, off again, counting, sampling
# at the counter's default interval), each round in one rotation of that order (a block of four
# rounds runs the four rotations, shuffled); every ratio is a chunk over the same round's "off"
# chunk. Works: the polling pass and every autorelease row of ours (a handed-over and a borrowed
# object's autorelease, an empty push + pop, the same object autoreleased again and again, a
# fresh object per pool, 1,000 fresh objects per pool). Everything runs under `taskset -c 0`.
#
#   Scripts/run-allocation-overhead.sh [--docs] [--processes N] [rounds] [chunk-ms] [work]
#
# Defaults: 3 processes, 200 rounds, 3 ms chunks, every work. The processes run one after another
# and their tables are merged (per cell, the median of the processes' medians and their range):
# now and then one process reads the counting mode apart from all others, up to 1.21x of off, with
# works that allocate nothing reading 1.02x in it (Docs/Memory.md, "Time, in pairs"). With
# --docs, replaces the generated block of Docs/Benchmarks.md's allocation-counter section.
#
# This script used to run package-benchmark once per mode in separate processes, the counter
# loaded with LD_PRELOAD. That method is dropped: this VM's host slows a vCPU for seconds at a
# time, so separate processes (or benchmarks seconds apart) compared fast periods with slow ones
# and read "bimodal" ratios; here each process's ratios are paired within it. The preloaded
# shared object costs within one instruction per malloc/free pair of the linked-in counter
# (Scripts/allocation-counter-callgrind.sh).
set -euo pipefail
# --processes 3 first: the caller's own --processes, after it, wins.
exec "$(dirname "$0")/run-paired-tool.sh" allocation-overhead run-allocation-overhead.sh \
    "the whole process under \`taskset -c 0\`; the works run on a thread of their own" \
    --processes 3 "$@"
