// The diagnostics hook every module reports through (`Diagnostics.setHandler`,
// `DiagnosticsRecorder`): part of this module's API, so a program that takes only this module
// can see and route its reports.
@_exported import RunLoopDiagnostics
