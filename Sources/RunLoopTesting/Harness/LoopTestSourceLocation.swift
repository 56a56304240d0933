/// Where in a test a check was asked for: what a failure points at in Swift Testing's and
/// XCTest's reports. Every checking method of the toolkit takes the four parts as default
/// arguments, so a failure points at the line that called it.
///
/// ```swift
/// let here = LoopTestSourceLocation()
/// print(here.line > 0)   // true
/// ```
public struct LoopTestSourceLocation: Sendable, CustomStringConvertible {
    /// `#fileID` of the call: "Module/File.swift".
    public let fileID: String
    /// `#filePath` of the call, as XCTest wants it.
    public let filePath: StaticString
    public let line: UInt
    public let column: UInt

    /// The location of the call (or the one given).
    public init(fileID: String = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column) {
        self.fileID = fileID
        self.filePath = filePath
        self.line = line
        self.column = column
    }

    /// The file ID, the line and the column, joined by colons.
    public var description: String { "\(fileID):\(line):\(column)" }
}
