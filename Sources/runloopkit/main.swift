print("usage: runloopkit [--list | --help | SCENARIO]")
