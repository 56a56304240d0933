// The umbrella: one import gives the loop, the pool, the commit pipeline and the instruments.
@_exported import Autorelease
@_exported import RunLoopDiagnostics
@_exported import LoopInstruments
@_exported import RunLoopCore
@_exported import Transactions
