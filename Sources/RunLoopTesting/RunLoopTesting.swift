// RunLoopTesting: the public toolkit for testing callout and commit ordering on a loop that runs
// on the virtual clock. The harness, the ordering assertions and trace record/replay live in
// files of their own in this module.
@_exported import RunLoopKit
