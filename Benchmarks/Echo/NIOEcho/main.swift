// nio-echo: SwiftNIO's echo server, the peer of runloopkit-echo in Scripts/run-echo.sh. One
// event loop thread (MultiThreadedEventLoopGroup(numberOfThreads: 1)), TCP_NODELAY on each
// connection, backlog 1024; the handler writes what it reads and flushes at read-complete (NIO's
// own echo example).
//
//   nio-echo   (prints "listening on 127.0.0.1:PORT"; SIGTERM or SIGINT stops it)
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// One line on standard output at once (the script reads the port from it; stdio would buffer).
func printNow(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
    }
}

final class EchoHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.write(data, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let bootstrap = ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 1024)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(EchoHandler())
        }
    }
do {
    let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
    printNow("listening on 127.0.0.1:\(channel.localAddress?.port ?? 0)")
    try await channel.closeFuture.get()   // ended by SIGTERM/SIGINT's default action
} catch {
    printNow("nio-echo: \(error)")
}
