import RunLoopKit

/// Why an ``EchoServer`` could not start. Nothing stays open when one is thrown.
public enum EchoServerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// ``EchoConfiguration/problem`` named a problem.
    case invalidConfiguration(String)
    /// Creating, binding or registering the listening socket failed.
    case systemCall(SystemCallError)
    /// The loop refused the listening socket's source.
    case refused(String)
    /// The server must be created on its loop's thread.
    case wrongThread

    public var description: String {
        switch self {
        case .invalidConfiguration(let problem): "invalid echo configuration: \(problem)"
        case .systemCall(let failure): "echo server: \(failure)"
        case .refused(let reason): "echo server: the loop refused the listening socket (\(reason))"
        case .wrongThread: "an EchoServer must be created on the thread of the loop it runs on"
        }
    }
}
