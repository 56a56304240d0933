// The service example of Docs/AutoreleasePool.md, compiled and run.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
import Autorelease

struct ServiceError: Error, Equatable { let path: String }

final class BufferPool {
    private(set) var spare: [UnsafeMutableRawBufferPointer] = []
    func borrow() -> UnsafeMutableRawBufferPointer {
        let buffer = spare.popLast() ?? .allocate(byteCount: 64 * 1024, alignment: 16)
        AutoreleasePool.deferCleanup(label: "return buffer") { self.spare.append(buffer) }
        return buffer
    }
}

/// Reads the first bytes of a file. The buffer goes back, then the descriptor is closed, when
/// the request's pool pops (LIFO), also when reading throws.
func firstBytes(of path: String, buffers: BufferPool) throws(ServiceError) -> [UInt8] {
    try withAutoreleasePool { () throws(ServiceError) -> [UInt8] in
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ServiceError(path: path) }
        AutoreleasePool.deferCleanup(label: "close \(path)") { close(fd) }
        let buffer = buffers.borrow()
        let count = read(fd, buffer.baseAddress, buffer.count)
        guard count >= 0 else { throw ServiceError(path: path) }
        return Array(buffer.prefix(count))
    }
}

@Suite("AutoreleasePoolDocExamples")
struct AutoreleasePoolDocExamplesTests {
    @Test("The service example returns the bytes, gives the buffer back and closes the file")
    func serviceExample() throws {
        var template = Array("/tmp/autorelease-doc-XXXXXX".utf8CString)
        let writer = mkstemp(&template)
        try #require(writer >= 0)
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        let content: [UInt8] = Array("hello, pool".utf8)
        #expect(write(writer, content, content.count) == content.count)
        close(writer)

        let buffers = BufferPool()
        let (bytes, spareAfter, missing) = onFreshThread { () -> ([UInt8]?, Int, ServiceError?) in
            let bytes = try? firstBytes(of: path, buffers: buffers)
            let spareAfter = buffers.spare.count
            var missing: ServiceError?
            do throws(ServiceError) { _ = try firstBytes(of: path + ".absent", buffers: buffers) } catch { missing = error }
            return (bytes, spareAfter, missing)
        }
        #expect(bytes == content)
        #expect(spareAfter == 1)              // the buffer came back when the request's pool popped
        #expect(missing == ServiceError(path: path + ".absent"))
        for buffer in buffers.spare { buffer.deallocate() }
    }
}
