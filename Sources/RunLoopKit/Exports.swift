// The umbrella: one import gives the loop, the pool, the commit pipeline, the instruments and
// the diagnostics hook (`Diagnostics.setHandler`) every module reports through.
@_exported import Autorelease
@_exported import RunLoopDiagnostics
@_exported import LoopInstruments
@_exported import RunLoopCore
@_exported import RunLoopDiagnostics
@_exported import Transactions
